"""``discover``, ``resolve`` and ``referrers repair`` (``agent-card`` is in agentcard_cmd)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from acx_oci import reasons
from acx_oci.cli.common import emit_json, json_option, level_state, registry_options, store_for
from acx_oci.cli.main import main
from acx_oci.errors import DeadlineExceeded, UsageError
from acx_oci.files import load_json_file
from acx_oci.model import Resolution, status_display
from acx_oci.oci import Store, parse_reference, repair_changes, repair_referrers
from acx_oci.services.artifacts import LoadedCartridge, fetch_status_list_https, load_cartridge
from acx_oci.services.consumer import ResolveLimits, StatusHistory, resolve_loaded
from acx_oci.timeutil import current_deadline
from acx_oci.trust import Trust, load_trust


def _short(digest: str | None) -> str:
    return (digest or "")[:19] + "…" if digest else "-"


@main.command()
@click.argument("ref")
@click.option("--artifact-type", help="Only referrers of this artifactType.")
@registry_options
@json_option
def discover(ref: str, artifact_type: str | None, plain_http: bool, insecure: bool, timeout: float,
             as_json: bool) -> None:
    """List the artifacts that refer to REF (OCI 1.1 Referrers API or the tag-schema fallback).

    Lists attestations written by acx-oci and referrers written by other tools
    (ORAS, cosign). Nothing is verified here: use `resolve` for that.

    \b
    Example:
      acx-oci discover registry.example/acme/dag-agent:1.0.0
      acx-oci discover reg.example/acme/agent:1 --artifact-type application/vnd.acx.level-attestation.v1 --json
    """
    store = store_for(ref, plain_http, insecure, timeout)
    desc = store.resolve(parse_reference(ref).target)
    listing = store.referrers(desc.digest, artifact_type)
    refs = listing.descriptors
    if as_json:
        emit_json({"subject": desc.digest, "source": listing.source, "partial": listing.partial,
                   "classifiedByManifest": listing.classified, "notes": list(listing.notes), "referrers": [
                       {"digest": d.digest, "mediaType": d.media_type, "artifactType": d.artifact_type,
                        "size": d.size, "annotations": d.annotations} for d in refs]})
        return
    click.echo(f"{ref} ({desc.digest})")
    for note in listing.notes:
        click.echo(f"note: {note}")
    by_type: dict[str, list[Any]] = {}
    for d in refs:
        by_type.setdefault(d.artifact_type or "(none)", []).append(d)
    types = sorted(by_type)
    for ti, at in enumerate(types):
        last_t = ti == len(types) - 1
        click.echo(f"{'└──' if last_t else '├──'} {at}")
        for di, d in enumerate(by_type[at]):
            last_d = di == len(by_type[at]) - 1
            pad = "    " if last_t else "│   "
            click.echo(f"{pad}{'└──' if last_d else '├──'} {d.digest}")
            keys = ("dev.acx.capability.id", "dev.acx.level.career-tier", "dev.acx.level.acx-level",
                    "dev.acx.level.issuer", "dev.acx.benchmark", "org.opencontainers.image.created")
            shown = {k.rsplit(".", 1)[-1]: d.annotations[k] for k in keys if d.annotations.get(k)}
            if shown:
                inner = pad + ("    " if last_d else "│   ")
                click.echo(inner + "  ".join(f"{k}={v}" for k, v in shown.items()))
    if not refs:
        click.echo("(no referrers)")


NO_REPLAY_HELP = ("WEAKER: do not re-derive the deciding credentials' levels from their game records; believe the "
                  "numbers a trusted key signed (a stolen or careless verifier key could then inflate a level). "
                  "Shown as replayed: false in the output.")


NO_LOG_HELP = ("WEAKER: do not check credentials against the transparency logs the trust file pins for their "
               "verifiers (a credential issued quietly, backdated or shown to you only would count). Said in the "
               "output's notes.")

STATUS_CACHE_HELP = ("Remember the highest status-list sequence seen here, to refuse rolled-back lists "
                     "(default: $ACX_OCI_CACHE_DIR, else $XDG_CACHE_HOME/acx-oci, else ~/.cache/acx-oci).")


def no_log_option(func: Any) -> Any:
    """``--no-log`` (``no_log``): skip the transparency-log check."""
    return click.option("--no-log", is_flag=True, help=NO_LOG_HELP)(func)


def status_cache_option(func: Any) -> Any:
    """``--status-cache DIR`` (``status_cache_dir``): where the highest status-list sequences seen are remembered."""
    return click.option("--status-cache", "status_cache_dir", type=click.Path(file_okay=False, path_type=Path),
                        metavar="DIR", help=STATUS_CACHE_HELP)(func)


@dataclass(frozen=True)
class ResolveFlags:
    """The options every resolving command shares (``resolve_options``), as one typed value."""

    status_list_files: tuple[Path, ...]
    allow_unknown_status: bool
    allow_network: bool
    check_evidence: bool
    max_referrers: int
    no_replay: bool
    no_log: bool
    status_cache_dir: Path | None


_FLAGS = tuple(f.name for f in fields(ResolveFlags))


def resolve_options(command: Any) -> Any:
    """The options every resolving command shares (resolve, pull, agent-card): trust, status, replay read alike;
    the command receives them as one ``flags: ResolveFlags``."""

    @functools.wraps(command)
    def with_flags(*args: Any, **params: Any) -> Any:
        flags = ResolveFlags(**{name: params.pop(name) for name in _FLAGS})
        return command(*args, flags=flags, **params)

    func = status_cache_option(with_flags)
    func = no_log_option(func)
    func = click.option("--no-replay", is_flag=True, help=NO_REPLAY_HELP)(func)
    func = click.option("--max-referrers", type=click.IntRange(1), default=1000, show_default=True,
                        help="Check at most this many attestations (the newest); more sets partial.")(func)
    func = click.option("--check-evidence", is_flag=True,
                        help="Also download every game record and verify its digest and signature.")(func)
    func = click.option("--allow-network", is_flag=True,
                        help="Allow HTTPS: for status lists not found in the registry, and for did:web "
                             "documents the trust file does not pin.")(func)
    func = click.option("--allow-unknown-status", is_flag=True,
                        help="Accept credentials whose revocation status is unknown (default: fail closed).")(func)
    func = click.option("--status-list", "status_list_files", multiple=True,
                        type=click.Path(dir_okay=False, path_type=Path),
                        help="A signed status list file to use when the registry has none (offline); repeatable.")(func)
    return func


def load_status_list_files(paths: tuple[Path, ...]) -> list[dict[str, Any]]:
    """``--status-list`` files, each checked to be a BitstringStatusListCredential."""
    from acx_oci.model import list_subject

    lists = []
    for p in paths:
        doc = load_json_file(p, "status list")
        list_subject(doc)  # one-line error if it is not a status list credential
        lists.append(doc)
    return lists


def check_deadline(resolution: Resolution, what: str) -> None:
    """Exit 3 when the command's deadline cut the resolution short (it is partial for that reason): which
    deadline, and how many of the attestations listed were judged by then."""
    deadline = current_deadline()
    if resolution.partial and deadline is not None and deadline.expired():
        raise DeadlineExceeded(f"{what}: {deadline.describe()} passed; {len(resolution.judged)} of "
                               f"{resolution.referrers_seen} attestations listed were checked")


def resolve_loaded_cli(store: Store, cart: LoadedCartridge, ref: str, trust: Trust, flags: ResolveFlags
                       ) -> Resolution:
    """What every resolving command does with its shared options (see ``resolve_options``)."""
    return resolve_loaded(
        store, cart, trust, now=datetime.now(UTC), status_lists=load_status_list_files(flags.status_list_files),
        allow_unknown_status=flags.allow_unknown_status, limits=ResolveLimits(max_referrers=flags.max_referrers),
        check_evidence=flags.check_evidence, fetch_remote_status=fetch_status_list_https if flags.allow_network
        else None, reference=ref, status_history=StatusHistory(flags.status_cache_dir), replay=not flags.no_replay,
        log=not flags.no_log,
    )


def run_resolution(store: Store, ref: str, trust: Trust, flags: ResolveFlags) -> tuple[Resolution, dict[str, Any]]:
    """Load + resolve; returns the resolution and the cartridge's ROM (for cards)."""
    cart = load_cartridge(store, parse_reference(ref).target, trust)
    return resolve_loaded_cli(store, cart, ref, trust, flags), cart.rom


# What a replay rejects for: the line saying something was replayed shows only when one of these, or a level, did.
_REPLAY_CODES = {reasons.EVIDENCE_MISMATCH, reasons.EVIDENCE_SIGNATURE, reasons.EVIDENCE_MISSING,
                 reasons.EVIDENCE_TOO_LARGE}


def render_resolution(resolution: Resolution) -> None:
    """The human resolution: only a level the signed ROM earned reads VERIFIED, and every rejection names its code."""
    sig = status_display(resolution.signature_status)
    click.echo(f"{resolution.reference}")
    click.echo(f"  manifest {resolution.manifest_digest}  ROM {resolution.rom_digest}  signature: {sig}")
    for cap in resolution.capabilities:
        b = cap.best
        if b is not None:
            played = "the signed ROM, sandboxed" if b.solver == "rom" else "the reference solver (a simulation)"
            click.echo(f"  {cap.capability.display()}  {level_state(b.solver)} tier={b.career_tier} mu={b.mu:.2f} "
                       f"sigma={b.sigma:.3f} level={b.acx_level}  played by: {played}")
            click.echo(f"      issuer {b.issuer}  benchmark {b.benchmark_id}@{b.benchmark_version}  "
                       f"credential {b.credential_digest}")
            for line in b.relaxed:
                click.echo(f"      relaxed: {line}")
            if b.model is not None:
                click.echo(f"      model {b.model['id']} over {b.model['api']}  (provider data terms: "
                           f"{b.model['dataUse']})")
                if b.model["dataUse"] != "no-training":
                    click.echo("      warning: held-out prompts went to a provider that may train on them")
        else:
            click.echo(f"  {cap.capability.display()}  NOT VERIFIED")
        for line in cap.attempts.lines():
            click.echo(f"      {line}")
        for r in cap.rejected:
            click.echo(f"      rejected {r.digest}: {', '.join(r.codes)}")
            if r.messages:
                click.echo(f"        ({r.messages[0]})")
    for r in resolution.unmatched:
        click.echo(f"  (attestation {r.digest} names no claimed capability: {', '.join(r.codes)})")
    for note in resolution.notes:
        click.echo(f"  note: {note}")
    if resolution.replayed and any(cap.best is not None for cap in resolution.capabilities):
        click.echo("  replayed: every deciding credential's level was re-derived from its game records")
    elif resolution.replayed and any(set(r.codes) & _REPLAY_CODES for c in resolution.capabilities
                                     for r in c.rejected):
        click.echo("  replayed: the candidate credentials were re-derived from their game records; none held")
    if resolution.partial:
        click.echo("  PARTIAL: a bound was hit; the answer may be incomplete")


@main.command()
@click.argument("ref")
@click.option("--trust", "trust_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Trust file: trusted verifiers, accepted benchmarks, gate, status policy.")
@click.option("--require", "requirements", multiple=True, metavar="'TASKTYPE>=TIER'",
              help="Exit 1 unless this claim resolves VERIFIED at this tier (or level, 'TASKTYPE>=L7'); repeatable. "
                   "Add '@model=MODEL-ID' to count only levels earned with that model "
                   "('build-dag>=senior@model=acme-large-2026-06'); '@minVerifiers=N' to need N distinct "
                   "verifiers (DIDs and keys; the level is the lowest of N); '@maxAttempts=COUNT/WINDOW' to refuse "
                   "a cartridge attempted more often ('build-dag>=senior@minVerifiers=2@maxAttempts=3/30d'; "
                   "'.../30d/publisher' counts every cartridge id of the same publisher key).")
@resolve_options
@registry_options
@json_option
def resolve(ref: str, trust_path: Path, requirements: tuple[str, ...], flags: ResolveFlags, plain_http: bool,
            insecure: bool, timeout: float, as_json: bool) -> None:
    """Turn REF's capability claims into verified proficiency (or say why not).

    Every level attestation referring to the cartridge is verified: proof,
    trusted issuer, independence (no self-issuance), sigma and games gates,
    ROM- and manifest-digest binding, accepted benchmark, validity dates and
    revocation (status list from the registry, --status-list, or HTTPS with
    --allow-network; unknown status fails closed unless --allow-unknown-status).
    The credentials that decide the answer are then replayed: their game
    records are fetched, signature-checked and re-rated, and any number that
    differs is evidence_mismatch (--no-replay skips this; weaker).

    \b
    Example:
      acx-oci resolve registry.example/acme/dag-agent:1.0.0 --trust trust.yaml
      acx-oci resolve registry.example/acme/dag-agent:1.0.0 --trust trust.yaml --require 'build-dag>=senior'

    \b
    Exit codes: 0 resolved (every --require met), 1 a --require unmet or the
    ROM tampered, 2 bad input, 3 registry failure.
    """
    from acx_oci.evaluation import parse_require, unmet

    required = [parse_require(text) for text in requirements]  # parsed once: bad input before any network
    trust = load_trust(trust_path)
    store = store_for(ref, plain_http, insecure, timeout)
    resolution, _ = run_resolution(store, ref, trust, flags)
    failures = unmet(resolution, required, datetime.now(UTC))
    if as_json:
        emit_json({**resolution.to_json(), **({"requirements": {"required": list(requirements),
                                                                "unmet": failures}} if requirements else {})})
    else:
        render_resolution(resolution)
        for failure in failures:
            click.echo(f"  REQUIREMENT NOT MET {failure}")
    check_deadline(resolution, "resolve: the result above is partial")
    if resolution.signature_status == reasons.TAMPERED or failures:
        raise SystemExit(1)


@main.group()
def referrers() -> None:
    """Maintain referrer discovery (the tag-schema fallback index)."""


@referrers.command("repair")
@click.argument("ref")
@registry_options
@json_option
def referrers_repair(ref: str, plain_http: bool, insecure: bool, timeout: float, as_json: bool) -> None:
    """Rewrite REF's sha256-<hex> fallback index: every referrer its own tags show, each fully described.

    Needed after concurrent writers on registries that ignore If-Match (CNCF
    Distribution): an index write can lose another writer's entry, never its tag.
    And after `skopeo copy --all` of the index, which drops artifactType, or a
    writer that gave an entry a false one: every entry is classified by fetching
    its manifest (digest-verified) and gets its artifactType and annotations from
    it; entries whose manifest names another subject are removed.

    \b
    Example:
      acx-oci referrers repair registry.example/acme/dag-agent:1.0.0
    """
    store = store_for(ref, plain_http, insecure, timeout)
    desc = store.resolve(parse_reference(ref).target)
    if parse_reference(ref).kind == "oci":
        raise UsageError("referrers repair: an OCI image layout finds referrers by subject; nothing to repair")
    before, after = repair_referrers(store, desc.digest)
    added, restored, removed = repair_changes(before, after)
    if as_json:
        emit_json({"subject": desc.digest, "before": len(before), "after": len(after), "added": added,
                   "classifiedByManifest": restored, "removed": removed})
        return
    click.echo(f"{desc.digest}: index had {len(before)} entries, now {len(after)} (+{len(added)})")
    if restored:
        click.echo(f"  {len(restored)} entr{'y' if len(restored) == 1 else 'ies'} classified by manifest "
                   "(artifactType and annotations restored):")
        by_digest = {d.digest: d for d in after}
        for digest in restored:
            click.echo(f"    {digest}  {by_digest[digest].artifact_type}")
    if removed:
        click.echo(f"  {len(removed)} removed (their manifest names another subject): {', '.join(removed)}")
