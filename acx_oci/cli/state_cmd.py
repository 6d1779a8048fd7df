"""``acx-oci state rebuild``: a verifier's state directory rebuilt from its transparency log and registry."""

from __future__ import annotations

from pathlib import Path

import click

from acx_oci.cli.common import emit_json, json_option, registry_options, verifier_state_options
from acx_oci.cli.main import main
from acx_oci.oci import StoreOptions
from acx_oci.services.verifier import parse_witness
from acx_oci.trust import load_identity


@main.group("state")
def state_group() -> None:
    """Verifier state: rebuild a lost --state directory from the registry and the transparency log."""


@state_group.command("rebuild")
@verifier_state_options("The verifier's key: only what it signed is believed, and the log's checkpoint must be its.",
                        "The state directory to rebuild: new or empty (else --force).")
@click.option("--log", "log_repo", metavar="REGISTRY/REPO",
              help="The verifier's transparency log: the attempt history (copied into STATE/log and named in "
                   "STATE/config.json).")
@click.option("--log-origin", metavar="ORIGIN", help="The log's origin, if not Sigsum's default for the key.")
@click.option("--repository", "repositories", multiple=True, metavar="REGISTRY/REPO",
              help="A cartridge repository the verifier published in (credentials, attempt records, status "
                   "lists); repeatable.")
@click.option("--force", is_flag=True, help="Replace the ledger and log of a non-empty state directory.")
@click.option("--allow-older-lists", is_flag=True,
              help="Rebuild even when the newest copy of a status list found is older than the log's last "
                   "signature of it, or no copy of a list a found credential names is found (its revocations "
                   "are lost: revoke again). Default: refused.")
@click.option("--witness", "witnesses", multiple=True, metavar="URL=VKEY",
              help="A witness of the log (tlog-witness URL prefix and cosignature/v1 key, as attest's --witness); "
                   "repeatable. Each is offered the served checkpoint: one that has cosigned a bigger tree refuses "
                   "the rebuild. Without any, the checkpoint's freshness is unproven (the report says so).")
@click.option("--accept-older-checkpoint", is_flag=True,
              help="Rebuild from the served checkpoint even though a witness, a later tiles-<N> tag or a log proof "
                   "shows a longer log (recorded in STATE/config.json). Default: refused, exit 1.")
@registry_options
@json_option
def state_rebuild(key: Path, issuer: str | None, state_dir: Path, log_repo: str | None, log_origin: str | None,
                  repositories: tuple[str, ...], force: bool, allow_older_lists: bool, witnesses: tuple[str, ...],
                  accept_older_checkpoint: bool, plain_http: bool, insecure: bool, timeout: float,
                  as_json: bool) -> None:
    """Rebuild a verifier's state (ledger and log) from what it published.

    Restored: every attempt the log holds (issued or not: cooldowns and
    acx:attempt counts come out as before), enriched from the credentials
    and attempt records found in the repositories; the status lists with
    every found credential's index, the newest copy's revoked bits and a
    sequence above any the log or a copy shows; where each list was
    published; the log's tiles and checkpoint. Only documents that verify
    with --key are believed.

    Not restored: refusals (no cooldown), run start times (the signing
    time stands in: a cooldown ends later, never earlier), attempts
    stopped before they were logged, the index of an issued credential no
    repository holds, held-out exposures, cosign projections, run folders.
    A list whose newest copy found is older than the log's last signature
    of it, or of which no copy is found, is refused (a revocation would be
    lost) unless --allow-older-lists. Give every repository the verifier published in.
    The report names each gap it met. Progress goes to stderr.

    \b
    Example:
      acx-oci state rebuild --key keys/verifier.key --state ./state \\
        --log registry.example/acx/log --repository registry.example/acme/agent
    """
    from acx_oci.services.verifier.rebuild import rebuild

    ident = load_identity(key, did=issuer)
    options = StoreOptions(plain_http=plain_http, insecure=insecure, timeout=timeout)
    report = rebuild(state_dir, ident, log=log_repo, origin=log_origin, repositories=list(repositories),
                     options=options, force=force, allow_older=allow_older_lists,
                     witnesses=[parse_witness(w) for w in witnesses], accept_older_checkpoint=accept_older_checkpoint,
                     progress=lambda text: click.echo(f"rebuild: {text}", err=True))
    if as_json:
        emit_json(report.to_json())
        return
    click.echo(f"REBUILT {state_dir}: {report.attempts} attempt(s) ({report.issued} issued, {report.not_issued} "
               f"not issued), {report.credentials} credential(s), {len(report.lists)} status list(s)"
               + (f", log of {report.log_size} entries" if report.log else ""))
    for sl in report.lists:
        click.echo(f"  {sl['url']}: sequence {sl['sequence']}, {sl['entries']} entries, {sl['revoked']} revoked")
    for warning in report.warnings:
        click.echo(f"  WARNING {warning}", err=True)
