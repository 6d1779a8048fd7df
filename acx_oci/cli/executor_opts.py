"""``attest --executor``: the options that say where games are played, and the cluster's progress line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from acx_oci.services.verifier import open_executor, parse_executor

if TYPE_CHECKING:
    from acx_oci.services.verifier import DaskExecutor

F = TypeVar("F", bound=Callable[..., Any])


def executor_options(func: F) -> F:
    """The ``--executor`` family in one decorator; ``open_from_options`` turns the values into an executor."""
    opts = [
        click.option("--executor", "executor", default="local", show_default=True, metavar="local|dask://HOST:PORT",
                     help="Where games are played: local (a pool of --jobs), dask://HOST:PORT (a Dask scheduler, plain "
                          "TCP: loopback only unless --allow-plaintext-executor) or dask+tls://HOST:PORT. Workers need "
                          "acx-oci[dask] and bubblewrap; held-out tasks travel to them, the signing key never does."),
        click.option("--executor-ca", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="dask+tls: the CA that signed the scheduler's certificate (else Dask's TLS config)."),
        click.option("--executor-cert", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="dask+tls: the verifier's client certificate (PEM)."),
        click.option("--executor-key", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="dask+tls: the client certificate's private key (PEM)."),
        click.option("--allow-plaintext-executor", is_flag=True,
                     help="Allow dask:// (unencrypted) to a non-loopback scheduler: held-out tasks cross it in the "
                          "clear."),
        click.option("--json-events", is_flag=True,
                     help="Write progress as JSON lines on stderr: games done / running / queued, per worker."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


@dataclass(frozen=True)
class ExecutorFlags:
    """The ``--executor`` family (``executor_options``) as one typed value."""

    executor: str
    executor_ca: Path | None
    executor_cert: Path | None
    executor_key: Path | None
    allow_plaintext_executor: bool
    json_events: bool

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> ExecutorFlags:
        """The family's values out of a command's keyword arguments (others are left there)."""
        return cls(**{f.name: params[f.name] for f in fields(cls)})

    def open(self, timeout: float) -> DaskExecutor | None:
        """Parse and connect before anything is attempted: a bad address or a missing extra costs no cooldown."""
        spec = parse_executor(str(self.executor), allow_plaintext=bool(self.allow_plaintext_executor),
                              ca_file=_s(self.executor_ca), cert_file=_s(self.executor_cert),
                              key_file=_s(self.executor_key))
        return open_executor(spec, timeout)


def open_from_options(kw: dict[str, Any], timeout: float) -> DaskExecutor | None:
    """Parse and connect before anything is attempted: a bad address or a missing extra costs no cooldown."""
    return ExecutorFlags.from_params(kw).open(timeout)


def _s(p: Path | None) -> str | None:
    return str(p) if p is not None else None


def progress_text(snap: dict[str, Any]) -> str:
    """``w1 3✓ 1▶ · w2 2✓ 1▶ · queued 5``: done and running per worker (``✗`` unproven), then the queue."""
    parts = [f"{name} {w['done']}✓ {w['running']}▶" + ("" if w["healthy"] else " ✗unproven")
             for name, w in snap["workers"].items()]
    return " · ".join([*parts, f"queued {snap['queued']}"])


def emit_event(snap: dict[str, Any]) -> None:
    """One ``--json-events`` cluster snapshot as a JSON line on stderr, flushed so a watcher sees it at once."""
    sys.stderr.write(json.dumps(snap, sort_keys=True) + "\n")
    sys.stderr.flush()


def local_snapshot(done: int, total: int, jobs: int) -> dict[str, Any]:
    """The local pool in the cluster's shape: one worker, ``local``, with up to ``jobs`` games running."""
    running = min(jobs, total - done)
    return {"event": "progress", "executor": "local", "total": total, "done": done, "running": running,
            "queued": total - done - running,
            "workers": {"local": {"done": done, "running": running, "healthy": True}}}
