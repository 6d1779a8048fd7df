"""``acx-oci sandbox check``: run the containment probes alone, to debug a machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from acx_oci import sandbox
from acx_oci.cli.common import emit_json, json_option
from acx_oci.cli.main import main
from acx_oci.egress import ModelSetup, model_key
from acx_oci.errors import UsageError
from acx_oci.model import modelapi as ma
from acx_oci.services.verifier import load_models
from acx_oci.solvers import game_spec, prove_game


@main.group("sandbox")
def sandbox_group() -> None:
    """The bubblewrap sandbox the ROM solver runs agents in."""


def _echo_proof(proof: dict[str, Any], title: str) -> None:
    click.echo(f"{title}: {proof['sandbox']} {proof.get('version') or '(unavailable)'}")
    for p in proof["probes"]:
        click.echo(f"  {'ok ' if p['ok'] else 'FAIL'}  {p['name']}: expected {p['expected']}, "
                   f"observed {p['observed']}")
    if proof.get("error"):
        click.echo(f"  error: {proof['error']}")
    click.echo("containment PROVEN" if proof["proven"] else "containment NOT proven")


def _model_proofs(keys: tuple[Path, ...], models_path: Path, pick: str | None) -> list[dict[str, Any]]:
    """One proof per models-file entry (or the one ``--model`` names), each in a model ROM's game spec."""
    models = load_models(models_path)
    if pick is not None:
        try:
            want = ma.parse_model_flag(pick)
        except ValueError as exc:
            raise UsageError(f"--model: {exc}") from None
        if (want.api, want.id) not in models:
            raise UsageError(f"--model {pick}: the models file ({models_path}) has no entry for it")
        models = {(want.api, want.id): models[(want.api, want.id)]}
    proofs = []
    for (api, mid), entry in sorted(models.items()):
        runtime = {"command": ["true"], "network": ma.NETWORK_MODEL, "model": {"api": api, "id": mid}}
        setup = ModelSetup(entry, model_key(entry))  # the real key: searched for inside, never shown
        rom = sandbox.staging_dir("acx-rom-check-")
        try:
            proof = prove_game(keys, rom, runtime, model=setup)
        finally:
            rom.rmdir()
        proofs.append({"model": {"api": api, "id": mid}, **proof})
    return proofs


@sandbox_group.command("check")
@click.option("--key", "keys", multiple=True, type=click.Path(path_type=Path),
              help="A secret the sandbox must not see (the verifier's key, its state dir); repeatable.")
@click.option("--models", "models_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The verifier's models file: also prove model egress, in a model ROM's spec per entry.")
@click.option("--model", "pick", metavar="API:ID", help="With --models: only this entry (openai-chat:ID, ...).")
@json_option
def sandbox_check(keys: tuple[Path, ...], models_path: Path | None, pick: str | None, as_json: bool) -> None:
    """Prove containment here: probes with known verdicts, in the spec games use.

    Plants a canary file, a loopback listener, a marked host process and a
    world-writable directory outside the sandbox, then checks from inside
    that none is reachable, that the --key paths do not exist, and that the
    uid is neither 0 nor yours. Exit 0 when every probe holds, 1 otherwise.

    With --models, for each entry (or the --model one) the spec is a model
    ROM's: the proxy socket bound as in a game, served by a real proxy whose
    upstream is a loopback stand-in (the provider is never called). Also
    checked: the entry's baseUrl host and port are unreachable from inside;
    another path, another model, CONNECT, an absolute URI and a foreign Host
    are refused by the proxy and recorded as refused, none forwarded; the
    entry's real key (read from its apiKeyEnv/apiKeyFile) is nowhere in the
    sandbox's environment, /proc or a response. --json prints
    {"proven", "proofs": [{"model", ...proof}]} then.

    \b
    Example:
      acx-oci sandbox check --key keys/verifier.key --key ~/.acx-oci/verifier
      acx-oci sandbox check --models models.yaml --model openai-chat:acme-large-2026-06
    """
    if pick is not None and models_path is None:
        raise UsageError("--model needs --models (the file that says where the model lives)")
    if models_path is not None:
        proofs = _model_proofs(keys, models_path, pick)
        proven = bool(proofs) and all(p["proven"] for p in proofs)
        if as_json:
            emit_json({"proven": proven, "proofs": proofs})
        else:
            for p in proofs:
                _echo_proof(p, f"model {p['model']['api']}:{p['model']['id']}")
            if not proofs:
                click.echo("the models file lists no model")
        if not proven:
            raise SystemExit(1)
        return
    rom = sandbox.staging_dir("acx-rom-check-")
    try:
        proof = sandbox.check(list(keys), game_spec(rom, {"command": ["true"], "network": "none"}))
    finally:
        rom.rmdir()
    if as_json:
        emit_json(proof)
    else:
        _echo_proof(proof, "sandbox")
    if not proof["proven"]:
        raise SystemExit(1)
