"""``transcripts export``: re-seal a run's game and model transcripts to an auditor."""

from __future__ import annotations

from pathlib import Path

import click

from acx_oci.cli.common import emit_json, json_option
from acx_oci.cli.main import main
from acx_oci.crypto import recipient_from_did_document
from acx_oci.files import load_json_file
from acx_oci.services.verifier import export
from acx_oci.trust import load_identity


@main.group()
def transcripts() -> None:
    """Game transcripts (with the model traffic they recorded): sealed, never published in the clear."""


@transcripts.command("export")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--key", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The key of the verifier that ran OUT_DIR (its transcripts are sealed to it).")
@click.option("--to", "to", multiple=True, required=True, metavar="AUDITOR.did.json",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="An auditor's DID document: the transcripts are re-sealed to its keyAgreement key. Repeatable.")
@click.option("-o", "--out", "into", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Where to write export.json, games/ and transcripts/ (must not exist or be empty).")
@json_option
def transcripts_export(out_dir: Path, key: Path, to: tuple[Path, ...], into: Path, as_json: bool) -> None:
    """Re-seal the transcripts of the attest output OUT_DIR to auditors, for `attest --model-replay`.

    OUT_DIR is an `attest -o` folder (result.json, games/, transcripts/). Each
    game transcript - with its model transcript, every exchange the model
    proxy recorded, so held-out prompts - is unsealed with --key and sealed
    again to every --to, never written in the clear. DIR/export.json says what
    a replay plays and checks: the cartridge's manifest and ROM digests, the
    benchmark digest, the run's --games/--sigma-max/--min-games, the model
    entry's public fields (id, api, trainingCutoff, budgets, dataUse; never
    its key or baseUrl), the original verdict and every game's number, task
    commitment and outcome; the signed game records are copied beside it.

    \b
    Exit codes: 0 exported, 1 a record or transcript does not match what
    result.json says, 2 OUT_DIR is not an attest output or --key cannot
    unseal its transcripts.

    \b
    Example:
      acx-oci transcripts export ./att --key keys/verifier.key --to keys/auditor.did.json -o ./export
      acx-oci attest registry.example/acme/llm-agent:1.0.0 --benchmark registry.example/acme/bench-py:2026.07.1 \\
          --key keys/auditor.key --issuer did:web:auditor.example.com -o ./replay --model-replay ./export
    """
    ident = load_identity(key)
    recipients = [recipient_from_did_document(load_json_file(p, "auditor DID document"), f"DID document {p}")
                  for p in to]
    done = export(out_dir, ident, recipients, into)
    if as_json:
        emit_json(done.to_json())
        return
    d = done.doc
    run = d["run"]
    click.echo(f"EXPORTED {sum(1 for g in d['games'] if g['transcript'])} game transcript(s) of {d['issuer']}'s run "
               f"({len(d['games'])} games, {run['status']}, acxLevel {run['acxLevel']})")
    click.echo(f"  sealed to:  {', '.join(d['sealedTo'])}")
    model = d["model"]
    click.echo(f"  model:      {model['api'] + ':' + model['id'] if model else 'none'}")
    click.echo(f"  ROM digest: {d['cartridge']['romDigest']}")
    click.echo(f"  export:     {done.directory / 'export.json'}")
