"""The ``acx-oci`` click group: renders AcxError once, as one line, with its exit code."""

from __future__ import annotations

import signal
import sqlite3
import sys
import threading
import traceback
from typing import Any

import click

from acx_oci import __version__
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

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AcxError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, SystemExit):
            raise
        except OSError as exc:  # a path the user gave can't be read or written
            where = f": {exc.filename}" if exc.filename else ""
            click.echo(f"error: {exc.strerror or exc}{where}", err=True)
            sys.exit(2)
        except sqlite3.DatabaseError as exc:
            click.echo(f"error: the verifier state is not a usable SQLite ledger ({exc})", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except Terminated:
            click.echo("terminated", err=True)
            sys.exit(143)
        except Exception as exc:  # a bug, not a user error: say so, briefly
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            click.echo(f"internal error: {type(exc).__name__}: {exc} (re-run with --debug for a traceback)", err=True)
            sys.exit(70)


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
