"""The ``acx-oci`` click group: renders AcxError once, as one line, with its exit code."""

from __future__ import annotations

import signal
import sqlite3
import sys
import threading
import traceback
from typing import Any

import click

from acx_oci import __version__, reasons
from acx_oci.cli import jsonout
from acx_oci.errors import AcxError


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so every ``finally`` runs (temporaries and partial pulls removed)."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


class AcxGroup(click.Group):
    """A click group that turns our exceptions into one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command with SIGTERM raised as ``Terminated`` (main thread only: signals cannot be set elsewhere)."""
        if threading.current_thread() is not threading.main_thread():
            return self._invoke(ctx)
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            return self._invoke(ctx)
        finally:
            signal.signal(signal.SIGTERM, previous)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Keep the arguments: a usage error stops before the command (and its --json flag) is parsed."""
        ctx.meta["acx_oci.argv"] = list(args)
        return super().parse_args(ctx, args)

    def _invoke(self, ctx: click.Context) -> Any:
        """Run the command; with --json, print its one document however it ends (then the usual stderr line)."""
        run = jsonout.begin(ctx)
        try:
            result = super().invoke(ctx)
        except click.exceptions.Exit as exc:
            jsonout.finish(run, exc.exit_code)
            raise
        except SystemExit as exc:
            jsonout.finish(run, exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1))
            raise
        except click.ClickException as exc:  # a usage error: the command never ran, so look at its arguments
            run.wanted = run.wanted or "--json" in ctx.meta.get("acx_oci.argv", ())
            jsonout.finish(run, exc.exit_code, reasons.BAD_INPUT, exc.format_message())
            raise
        except click.exceptions.Abort:
            jsonout.finish(run, 1, reasons.ERROR, "aborted")
            raise
        except BaseException as exc:
            code, exit_code, line = _failure(exc)
            jsonout.finish(run, exit_code, code, line)
            if ctx.obj and ctx.obj.get("debug") and isinstance(exc, Exception):
                traceback.print_exc()
            click.echo(_stderr_line(exit_code, line), err=True)
            sys.exit(exit_code)
        jsonout.finish(run, 0)
        return result


def _failure(exc: BaseException) -> tuple[str, int, str]:
    """An exception as (reason code, exit code, one line): AcxError its own; the rest as the CLI always said."""
    if isinstance(exc, AcxError):
        return exc.code, exc.exit_code, str(exc)
    if isinstance(exc, OSError):  # a path the user gave can't be read or written
        where = f": {exc.filename}" if exc.filename else ""
        return reasons.BAD_INPUT, 2, f"{exc.strerror or exc}{where}"
    if isinstance(exc, sqlite3.DatabaseError):
        return reasons.BAD_INPUT, 2, f"the verifier state is not a usable SQLite ledger ({exc})"
    if isinstance(exc, KeyboardInterrupt):
        return reasons.ERROR, 130, "interrupted"
    if isinstance(exc, Terminated):
        return reasons.ERROR, 143, "terminated"
    if not isinstance(exc, Exception):
        raise exc
    return reasons.ERROR, 70, f"{type(exc).__name__}: {exc}"  # a bug, not a user error: say so, briefly


def _stderr_line(exit_code: int, message: str) -> str:
    if exit_code in (130, 143):
        return message
    if exit_code == 70:
        return f"internal error: {message} (re-run with --debug for a traceback)"
    return f"error: {message}"


@click.group(cls=AcxGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="acx-oci")
@click.option("--debug", is_flag=True, help="Show a traceback for errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Build, sign, attest and resolve AI agent cartridges as OCI artifacts.

    \b
    References:
      HOST[:PORT]/REPO[:TAG|@DIGEST]   a registry repository (loopback hosts use plain HTTP)
      oci:PATH[:TAG|@DIGEST]           an OCI image layout on disk (skopeo's syntax)

    \b
    Exit codes: 0 ok, 1 verification or policy failure, 2 usage or bad input,
    3 registry or network failure.

    \b
    Start with:  acx-oci demo
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
