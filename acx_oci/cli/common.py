"""Options and rendering shared by the thin CLI commands."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

from acx_oci.oci.open import open_store
from acx_oci.oci.store import Store, StoreOptions

F = TypeVar("F", bound=Callable[..., Any])


def registry_options(func: F) -> F:
    """``--plain-http`` / ``--insecure`` / ``--timeout`` for commands that reach a registry."""
    func = click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
                        help="Seconds per registry request (connecting is capped at 3 s).")(func)
    func = click.option("--insecure", is_flag=True, help="Skip TLS certificate verification.")(func)
    func = click.option("--plain-http", is_flag=True,
                        help="Use HTTP instead of HTTPS (automatic for loopback hosts).")(func)
    return func


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(func)


def store_for(ref: str, plain_http: bool = False, insecure: bool = False, timeout: float = 10.0) -> Store:
    return open_store(ref, StoreOptions(plain_http=plain_http, insecure=insecure, timeout=timeout))


def emit_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, sort_keys=False))
