"""The ``acx-oci`` click group: renders AcxError once, as one line, with its exit code.

The group is lazy: a command's module (and with it cryptography, requests, jsonschema, the services)
is imported only when that command runs or its ``--help`` is asked for, so ``acx-oci --version`` and
``acx-oci --help`` start in a fraction of the time (``benchmarks/startup.py``). :data:`COMMANDS` names
each top-level command's module and the one-line summary ``--help`` lists; a test keeps it equal to
the real commands.
"""

from __future__ import annotations

import importlib
import signal
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


#: Every top-level command: (the module that registers it, its summary: the first sentence of its help, which
#: click shortens for the listing as it does the loaded command's, whichever click version is installed).
COMMANDS: dict[str, tuple[str, str]] = {
    "agent-card": ("agentcard_cmd", "Emit an A2A AgentCard for a cartridge (`agent-card REF`), or verify a "
                                    "signed one (`agent-card verify`)."),
    "attest": ("attest_cmd", "Independently re-run CARTRIDGE_REF on the sealed held-out slice of BENCH_REF."),
    "benchmark": ("benchmark_cmd", "Benchmarks: task suites whose held-out slice is sealed to verifiers."),
    "cartridge": ("cartridge_cmd", "Create and publish agent cartridges."),
    "copy": ("copy_cmd", "Mirror SRC to DST: the cartridge, its attestations (every layer and game record), "
                         "other referrers (e.g. exam certifications), and the status lists the credentials "
                         "point to."),
    "demo": ("demo_cmd", "Earn a level, then try to fake it: the whole story, no server needed."),
    "dev": ("dev_cmd", "Development helpers: stand-ins for outside services, to run the docs' walk-throughs "
                       "offline."),
    "discover": ("referrers_cmd", "List the artifacts that refer to REF (OCI 1.1 Referrers API or the "
                                  "tag-schema fallback)."),
    "doctor": ("doctor_cmd", "Probe what the registry HOST[:PORT] really does, and say how acx-oci will use it."),
    "env": ("env_cmd", "Environment images: the root file system exams and ROMs run in."),
    "exam": ("exam_cmd", "Exam certification: no benchmark scores anyone until its exams survive the eight "
                         "stages."),
    "gateway": ("policy_cmd", "Serve a policy-enforcing proxy of the OCI distribution API in front of UPSTREAM."),
    "inspect": ("cartridge_cmd", "Show a cartridge's discovery card: identity, digests, signature status, claims."),
    "keygen": ("keys_cmd", "Create an Ed25519 identity: PREFIX.key (PKCS#8 PEM, 0600) and PREFIX.did.json."),
    "keys": ("keys_cmd", "Key formats other tools read (cosign, Kyverno, Ratify)."),
    "log": ("log_cmd", "Check, watch and mirror a verifier's transparency log (C2SP tlog-tiles in an OCI "
                       "repository)."),
    "policy": ("policy_cmd", "Policy files (apiVersion acx.dev/policy/v1): which repositories must meet which bar."),
    "pull": ("cartridge_cmd", "Pull a cartridge with its verified capabilities, digest- and signature-checked."),
    "referrers": ("referrers_cmd", "Maintain referrer discovery (the tag-schema fallback index)."),
    "resolve": ("referrers_cmd", "Turn REF's capability claims into verified proficiency (or say why not)."),
    "revoke": ("revoke_cmd", "Revoke a credential: set its status bit, re-sign the list, republish it everywhere."),
    "sandbox": ("sandbox_cmd", "The bubblewrap sandbox the ROM solver runs agents in."),
    "state": ("state_cmd", "Verifier state: rebuild a lost --state directory from the registry and the transparency "
                           "log."),
    "status-list": ("vc_cmd", "Bitstring Status Lists: create, revoke an index, check an index."),
    "status-refresh": ("revoke_cmd", "Re-sign the state's status lists (validFrom = now, next acx:sequence) and "
                                     "republish them everywhere."),
    "transcripts": ("transcripts_cmd", "Game transcripts (with the model traffic they recorded): sealed, never "
                                       "published in the clear."),
    "vc": ("vc_cmd", "Sign and verify W3C Verifiable Credentials (Data Integrity eddsa-jcs-2022)."),
}


_NO_SUCH_COMMAND: Any = getattr(click.exceptions, "NoSuchCommand", ())


def load_all() -> click.Group:
    """Import every command module (the reference, and tests that walk ``main.commands``); returns the group."""
    for module in sorted({m for m, _ in COMMANDS.values()}):
        importlib.import_module(f"acx_oci.cli.{module}")
    return main


def summary_line(name: str, limit: int) -> str:
    """A command's summary shortened as click shortens the loaded command's (its public API, no deprecated helper)."""
    return click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)


class AcxGroup(click.Group):
    """A click group that turns our exceptions into one line and an exit code, and loads commands lazily."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, loaded or not, in the order ``--help`` lists them."""
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, importing its module the first time it is asked for."""
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"acx_oci.cli.{COMMANDS[cmd_name][0]}")
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                            list[str]]:
        """click's, with its "Did you mean" drawn from every command, loaded or not (click offers loaded ones)."""
        try:
            return super().resolve_command(ctx, args)
        except _NO_SUCH_COMMAND as exc:  # click >= 8.2; before, it made no suggestion at all
            raise _NO_SUCH_COMMAND(exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's command list, with the summaries of commands not loaded taken from :data:`COMMANDS`."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            cmd = self.commands.get(name)
            if cmd is None:
                rows.append((name, summary_line(name, limit)))
            elif not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command with SIGTERM raised as ``Terminated`` (main thread only: signals cannot be set elsewhere)."""
        try:
            if threading.current_thread() is not threading.main_thread():
                return self._invoke(ctx)
            previous = signal.signal(signal.SIGTERM, _on_sigterm)
            try:
                return self._invoke(ctx)
            finally:
                signal.signal(signal.SIGTERM, previous)
        except BrokenPipeError:  # while the --json document went out: as quiet as any other write
            _quiet_broken_pipe()

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
        except BrokenPipeError:
            _quiet_broken_pipe()  # `acx-oci resolve ... | head -1`: the reader is done, as with git
        except BaseException as exc:
            code, exit_code, line = _failure(exc)
            jsonout.finish(run, exit_code, code, line)
            if ctx.obj and ctx.obj.get("debug") and isinstance(exc, Exception):
                traceback.print_exc()
            click.echo(_stderr_line(exit_code, line), err=True)
            sys.exit(exit_code)
        jsonout.finish(run, 0)
        return result


#: The exit status of a process killed by SIGPIPE as a shell reports it (git's, when its reader goes away).
BROKEN_PIPE_EXIT = 128 + 13


def _quiet_broken_pipe() -> None:
    """Stop at once, silently: stdout's reader has gone, so nothing more is written there (not even at exit,
    where Python's flush would complain), and stderr says nothing, as ``git log | head -1`` does not."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (captured): nothing to redirect
        pass
    sys.exit(BROKEN_PIPE_EXIT)


def _failure(exc: BaseException) -> tuple[str, int, str]:
    """An exception as (reason code, exit code, one line): AcxError its own; the rest as the CLI always said."""
    if isinstance(exc, AcxError):
        return exc.code, exc.exit_code, str(exc)
    if isinstance(exc, OSError):  # a path the user gave can't be read or written
        where = f": {exc.filename}" if exc.filename else ""
        return reasons.BAD_INPUT, 2, f"{exc.strerror or exc}{where}"
    sqlite3 = sys.modules.get("sqlite3")  # not imported: the error cannot be one of its (and --version stays fast)
    if sqlite3 is not None and isinstance(exc, sqlite3.DatabaseError):
        return reasons.BAD_INPUT, 2, f"the verifier state is not a usable SQLite ledger ({exc})"
    if isinstance(exc, KeyboardInterrupt):
        return reasons.ERROR, 130, str(exc) or "interrupted"
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
