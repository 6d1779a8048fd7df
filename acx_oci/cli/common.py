"""Options and rendering shared by the thin CLI commands."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, overload

import click

from acx_oci.cli.jsonout import emit_json, partial_json, want_json
from acx_oci.model import level_word
from acx_oci.net import set_default_ca_file
from acx_oci.oci import Store, StoreOptions, open_store
from acx_oci.timeutil import WORK_BASE_SECONDS, WORK_PER_MIB, WORK_PER_REFERRER, Deadline, deadline_scope

F = TypeVar("F", bound=Callable[..., Any])


#: ``--deadline``'s default for commands that only talk to a registry: None, a bound sized to the work.
DEFAULT_DEADLINE: float | None = None
SIZED_HELP = (f"Default: sized to the work, {WORK_BASE_SECONDS:g} s + {WORK_PER_REFERRER:g} s per attestation "
              f"listed + {WORK_PER_MIB:g} s per MiB transferred (--timeout still bounds each request).")


def _with_deadline(func: F, default: float | None) -> F:
    """Add ``--deadline`` and run the command under it (the ambient :class:`Deadline` the stores obey).

    Given, it is the user's fixed limit; left at a None default, the bound grows with the work found (a
    resolve of 1,000 honest attestations on a loaded machine must not fail by default), while each request
    stays bounded by ``--timeout``, so a trickling registry still ends the command in time.
    """

    @functools.wraps(func)
    def run(*args: Any, deadline_seconds: float | None, **kwargs: Any) -> Any:
        deadline = (Deadline.sized() if deadline_seconds is None else
                    Deadline.after(deadline_seconds) if deadline_seconds > 0 else None)
        with deadline_scope(deadline):
            return func(*args, **kwargs)

    what = ("the whole command" if default is None or default else
            "the network part; the command also does long local work, so 0 (none) is the default")
    return click.option(
        "--deadline", "deadline_seconds", type=click.FloatRange(min=0), default=default,
        show_default=default is not None,
        help=f"Seconds for {what}: requests still outstanding then are cancelled (exit 3; a resolution "
             "already under way is reported partial). 0: no overall deadline."
             + (f" {SIZED_HELP}" if default is None else ""))(run)  # type: ignore[return-value]


CA_FILE_HELP = ("PEM file of CA certificates to trust for the registry (default: /etc/docker/certs.d/HOST:PORT/"
                "ca.crt when present, else the system store). With it, a loopback registry is spoken to over HTTPS.")


def _use_ca_file(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """Every registry connection this command opens trusts ``value`` (until the command ends)."""
    set_default_ca_file(value)
    ctx.call_on_close(lambda: set_default_ca_file(None))


def ca_file_option(func: F, help: str = CA_FILE_HELP) -> F:
    """``--ca-file FILE``: the CA bundle registry connections verify with (``acx_oci.net.tls``)."""
    return click.option("--ca-file", type=click.Path(exists=True, dir_okay=False), expose_value=False,
                        callback=_use_ca_file, help=help)(func)


@overload
def registry_options(func: F) -> F: ...


@overload
def registry_options(*, deadline: float | None) -> Callable[[F], F]: ...


def registry_options(func: F | None = None, *, deadline: float | None = DEFAULT_DEADLINE) -> F | Callable[[F], F]:
    """``--plain-http`` / ``--insecure`` / ``--ca-file`` / ``--timeout`` / ``--deadline`` for commands that reach a
    registry.

    ``@registry_options`` gives the work-sized default deadline; ``@registry_options(deadline=0)`` none,
    for commands that run games or build images between their requests; a number, that fixed default.
    """

    def decorate(f: F) -> F:
        f = _with_deadline(f, deadline)
        f = click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
                         help="Seconds for each registry request in total, body included (blobs get 1 s more "
                              "per MiB; connecting is capped at 3 s).")(f)
        f = ca_file_option(f)
        f = click.option("--insecure", is_flag=True,
                         help="Skip TLS certificate verification (also over REQUESTS_CA_BUNDLE). With it, a "
                              "loopback registry is spoken to over HTTPS.")(f)
        f = click.option("--plain-http", is_flag=True,
                         help="Use HTTP instead of HTTPS (automatic for loopback hosts unless --ca-file, "
                              "--insecure or a certs.d entry asks for TLS).")(f)
        return f

    return decorate(func) if func is not None else decorate


def json_option(func: F) -> F:
    """``--json``: the command's result, or its failure, as one JSON document on stdout (see ``cli.jsonout``)."""

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("as_json"):
            want_json()  # from here on, however the command ends, stdout gets one document
        return func(*args, **kwargs)

    return click.option("--json", "as_json", is_flag=True,
                        help="Print one JSON document on stdout, also on failure "
                             "(ok, exitCode, code, message beside the result).")(run)  # type: ignore[return-value]


def verifier_state_options(key_help: str, state_help: str) -> Callable[[F], F]:
    """``--key`` / ``--issuer`` / ``--state``: the verifier identity and state that a state-changing command
    needs. Only the help for ``--key`` and ``--state`` differs, so the option names and defaults stay the same
    everywhere."""

    def decorate(f: F) -> F:
        f = click.option("--state", "state_dir", type=click.Path(file_okay=False, path_type=Path),
                         default=Path.home() / ".acx-oci" / "verifier", show_default=True, help=state_help)(f)
        f = click.option("--issuer", metavar="DID",
                         help="The verifier's DID (default: from PREFIX.did.json or did:key).")(f)
        return click.option("--key", required=True, type=click.Path(dir_okay=False, path_type=Path),
                            help=key_help)(f)

    return decorate


def env_source_options(func: F) -> F:
    """``--find-links`` / ``--index-url``: where a command that builds exam environments gets the wheels."""
    func = click.option("--index-url", default=None,
                        help="Building an environment: the package index (default: PyPI).")(func)
    return click.option("--find-links", "find_links", multiple=True,
                        type=click.Path(exists=True, file_okay=False, path_type=Path),
                        help="Building an environment: also take wheels from this directory (repeatable).")(func)


def store_for(ref: str, plain_http: bool = False, insecure: bool = False, timeout: float = 10.0) -> Store:
    """The store a command works on, closed when the command's click context ends (however it ends),
    so a command body needs no ``with`` of its own. Outside a click context the caller closes it."""
    store = open_store(ref, StoreOptions(plain_http=plain_http, insecure=insecure, timeout=timeout))
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(store.close)
    return store


def level_state(solver: str) -> str:
    """How a level reads to a human: only a level the signed ROM earned in the sandbox says VERIFIED.

    A simulated level (the reference solver played, not the agent), accepted only because the trust file
    allows simulations, says SIMULATED; one vocabulary everywhere (issue 34): VERIFIED, SIMULATED, NOT VERIFIED.
    """
    return level_word(solver)


__all__ = ["ca_file_option", "emit_json", "env_source_options", "json_option", "level_state", "partial_json",
           "registry_options", "store_for", "verifier_state_options"]
