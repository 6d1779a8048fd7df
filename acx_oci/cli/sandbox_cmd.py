"""``acx-oci sandbox check``: run the containment probes alone, to debug a machine."""

from __future__ import annotations

from pathlib import Path

import click

from acx_oci import sandbox
from acx_oci.cli.common import emit_json, json_option
from acx_oci.cli.main import main
from acx_oci.solvers.rom import game_spec


@main.group("sandbox")
def sandbox_group() -> None:
    """The bubblewrap sandbox the ROM solver runs agents in."""


@sandbox_group.command("check")
@click.option("--key", "keys", multiple=True, type=click.Path(path_type=Path),
              help="A secret the sandbox must not see (the verifier's key, its state dir); repeatable.")
@json_option
def sandbox_check(keys: tuple[Path, ...], as_json: bool) -> None:
    """Prove containment here: probes with known verdicts, in the spec games use.

    Plants a canary file, a loopback listener, a marked host process and a
    world-writable directory outside the sandbox, then checks from inside
    that none is reachable, that the --key paths do not exist, and that the
    uid is neither 0 nor yours. Exit 0 when every probe holds, 1 otherwise.

    \b
    Example:
      acx-oci sandbox check --key keys/verifier.key --key ~/.acx-oci/verifier
    """
    rom = sandbox.staging_dir("acx-rom-check-")
    try:
        proof = sandbox.check(list(keys), game_spec(rom, {"command": ["true"], "network": "none"}))
    finally:
        rom.rmdir()
    if as_json:
        emit_json(proof)
    else:
        click.echo(f"sandbox: {proof['sandbox']} {proof.get('version') or '(unavailable)'}")
        for p in proof["probes"]:
            click.echo(f"  {'ok ' if p['ok'] else 'FAIL'}  {p['name']}: expected {p['expected']}, "
                       f"observed {p['observed']}")
        if proof.get("error"):
            click.echo(f"  error: {proof['error']}")
        click.echo("containment PROVEN" if proof["proven"] else "containment NOT proven")
    if not proof["proven"]:
        raise SystemExit(1)
