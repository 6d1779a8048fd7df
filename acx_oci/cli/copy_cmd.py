"""``acx-oci copy``: a verified mirror (registry, ``oci:`` layout, back)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from acx_oci.cli.common import emit_json, json_option, registry_options
from acx_oci.cli.main import main
from acx_oci.cli.referrers_cmd import status_cache_option
from acx_oci.oci import StoreOptions
from acx_oci.services.consumer import CopyOutcome, CopyRequest, ResolveLimits, StatusHistory, copy_artifact
from acx_oci.trust import load_trust


class _Bar:
    """A rich progress bar on stderr, started on the first event and gone when the copy ends."""

    def __init__(self) -> None:
        self.progress: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int, text: str) -> None:
        if self.progress is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TransferSpeedColumn,
            )

            self.progress = Progress(TextColumn("copy"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                                     TimeElapsedColumn(), TextColumn("{task.description}"), transient=True,
                                     console=Console(stderr=True))
            self.progress.start()
            self.task = self.progress.add_task("", total=None)
        self.progress.update(self.task, completed=done, total=total or None, description=text)

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def _render(out: CopyOutcome) -> None:
    click.echo(f"copied {out.source} -> {out.destination}")
    mounted = f", {out.blobs_mounted} mounted within the registry" if out.blobs_mounted else ""
    present = out.blobs - out.blobs_copied - out.blobs_mounted
    click.echo(f"  {out.manifests} manifests, {out.blobs} blobs ({out.blobs_copied} copied{mounted}, "
               f"{present} already there; {out.bytes_copied} of {out.bytes_total} bytes moved)")
    kinds: dict[str, int] = {}
    for r in out.referrers:
        kinds[str(r["artifactType"])] = kinds.get(str(r["artifactType"]), 0) + 1
    for kind, n in sorted(kinds.items()):
        click.echo(f"  {n} referrer(s) {kind}")
    for tag in out.status_lists:
        click.echo(f"  status list {tag}")
    for s in out.skipped:
        click.echo(f"  skipped {s['digest']} (not verified: {s['reason']})")
    if out.source_verdict is not None:
        caps = out.source_verdict["capabilities"]
        levels = [c for c in caps if c["effective"] == "VERIFIED"]
        verified = sum(1 for c in levels if c.get("solver") == "rom")  # a simulated level is never VERIFIED
        simulated = f", {len(levels) - verified} SIMULATED" if len(levels) > verified else ""
        click.echo(f"  source resolves: {verified}/{len(caps)} claims VERIFIED{simulated}, "
                   f"{out.source_verdict['verifiedAttestations']}/{out.source_verdict['attestations']} "
                   "attestations verify")
    if out.destination_same:
        click.echo("  the copy resolves the same")
    for note in out.notes:
        click.echo(f"  note: {note}")


@main.command("copy")
@click.argument("src")
@click.argument("dst")
@click.option("--trust", "trust_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Resolve the source before copying and the copy after it; they must agree.")
@click.option("--only-verified", is_flag=True,
              help="Copy only the level attestations whose digest the source's resolution judged VERIFIED "
                   "(needs --trust).")
@click.option("--max-referrers", type=click.IntRange(1), default=1000, show_default=True,
              help="With --trust: check at most this many attestations.")
@click.option("-q", "--quiet", is_flag=True, help="No progress display.")
@status_cache_option
@registry_options
@json_option
def copy_command(src: str, dst: str, trust_path: Path | None, only_verified: bool, max_referrers: int, quiet: bool,
                 status_cache_dir: Path | None, plain_http: bool, insecure: bool, timeout: float,
                 as_json: bool) -> None:
    """Mirror SRC to DST: the cartridge, its attestations (every layer and game record), other
    referrers (e.g. exam certifications), and the status lists the credentials point to.

    Registry to registry, registry to an `oci:` layout (the air-gap bundle) and back. Bytes and
    digests are preserved and every read is digest-verified; status lists keep their
    acx-status-<uuid> tag; a registry without the Referrers API gets the sha256-<hex> index.
    DST's tag defaults to SRC's. With --trust the source is resolved first and the copy after,
    and a different answer is a failure (exit 1).

    The cosign projection goes along exactly: the publisher's .sig tag always, and the level's .att
    tag layer and Sigstore bundle referrer only when --trust resolves that level VERIFIED (not
    revoked, superseded or expired); DST's projections of levels that do not stand are taken down.

    \b
    Example:
      acx-oci copy registry.example/acme/dag-agent:1.0.0 oci:./bundle:1.0.0 --trust trust.yaml
      acx-oci copy oci:./bundle:1.0.0 mirror.internal/acme/dag-agent --trust trust.yaml --only-verified
    """
    trust = load_trust(trust_path) if trust_path is not None else None
    bar = _Bar() if not (as_json or quiet) and sys.stderr.isatty() else None
    req = CopyRequest(source=src, destination=dst, now=datetime.now(UTC), trust=trust, only_verified=only_verified,
                      store_options=StoreOptions(plain_http=plain_http, insecure=insecure, timeout=timeout),
                      status_history=StatusHistory(status_cache_dir) if trust is not None else None,
                      limits=ResolveLimits(max_referrers=max_referrers), progress=bar)
    try:
        outcome = copy_artifact(req)
    finally:
        if bar is not None:
            bar.stop()
    if as_json:
        emit_json(outcome.to_json())
    else:
        _render(outcome)
