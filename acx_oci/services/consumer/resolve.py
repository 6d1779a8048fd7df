"""Turn a cartridge's claims into verified proficiency by walking its referrers.

A pipeline of values: :func:`~acx_oci.services.consumer.resolve_fetch.list_attestations` →
:func:`~acx_oci.services.consumer.resolve_fetch.gather` (every attestation's manifest, credential
and records in parallel, digest-verified, bounded in count, bytes and time; every copy
of each status list — the cartridge's repository, then files given by the user, then
HTTPS when allowed — and the sequence this consumer remembers, ``StatusHistory``) →
the pure judge (:func:`~acx_oci.evaluation.judge.judge_credentials`: every verification
rule, per superseding key newest first, each credential that verifies replayed by
:class:`ReplayStep` before it decides; a list older than the remembered sequence is a rollback) →
:func:`~acx_oci.evaluation.judge.capability_verdicts`. Per-phase seconds and counts travel in
``Resolution.phases``; proofs and replays verified before come from the consumer's verdict cache
(:mod:`acx_oci.services.consumer.verdictcache`). A claim is VERIFIED only when a
credential that passed all of them names it; the newest valid credential per issuer, ROM,
benchmark and capability wins (older ones are ``superseded``), and the highest level among
those is the effective one. The attempt history (attempt-record referrers and the credentials'
``acx:attempt``) is read last, bounded the same way (:func:`~acx_oci.evaluation.attempt_history.with_attempts`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypedDict, Unpack

from acx_oci.evaluation import (
    NO_LOG_NOTE,
    CartridgeFacts,
    Check,
    DidDocuments,
    FetchedRecord,
    Judgement,
    KeyResolver,
    Material,
    capability_verdicts,
    judging,
    offline_keys,
    pinned_keys,
    with_attempts,
    with_log_attempts,
)
from acx_oci.evaluation import sequence as list_sequence
from acx_oci.model import AcceptedCredential, CapabilityRecord, Resolution, issuer_id
from acx_oci.oci import Store
from acx_oci.services.artifacts import LoadedCartridge, load_cartridge
from acx_oci.services.consumer.answers import answer_needs
from acx_oci.services.consumer.attempt_fetch import fetch_attempt_records
from acx_oci.services.consumer.did_keys import DidFetcher
from acx_oci.services.consumer.log_fetch import LogOpener, gather_logs, remember_logs
from acx_oci.services.consumer.logcache import LogHistory
from acx_oci.services.consumer.replay import ReplayJob, issuer_keys, replay_jobs
from acx_oci.services.consumer.resolve_fetch import (
    Gathered,
    ResolveLimits,
    StatusFetcher,
    StatusSources,
    gather,
    list_attestations,
    supplied_lists,
    time_bound_note,
)
from acx_oci.services.consumer.resolve_phases import Phases
from acx_oci.services.consumer.statuscache import StatusHistory
from acx_oci.services.consumer.verdictcache import TrustView, VerifiedCredentialCache
from acx_oci.timeutil import Deadline, current_deadline, deadline_scope
from acx_oci.trust import Trust


class ResolveOptions(TypedDict, total=False):
    """The optional knobs of a resolve, each as :func:`_resolve` documents it; typed, so a misspelled or
    mistyped one is a mypy error at the caller (no ``**kwargs: Any``)."""

    status_lists: list[dict[str, Any]] | None
    allow_unknown_status: bool
    check_evidence: bool
    fetch_remote_status: StatusFetcher | None
    reference: str
    status_history: StatusHistory | None
    replay: bool
    log: bool
    open_log: LogOpener | None


def resolve_loaded(store: Store, cart: LoadedCartridge, trust: Trust, *, now: datetime,
                   limits: ResolveLimits | None = None, **options: Unpack[ResolveOptions]) -> Resolution:
    """Resolve an already-loaded cartridge (the gateway and ``pull`` reuse the load); see :func:`_resolve`.

    ``limits.deadline_seconds`` (or the caller's ambient deadline, when earlier) is enforced: fetches
    in flight are cut when it passes and the resolution comes back ``partial`` with the reason.
    """
    lim = limits or ResolveLimits()
    deadline = Deadline.after(lim.deadline_seconds).earliest(current_deadline())
    with deadline_scope(deadline):
        return _resolve(store, cart, trust, lim=lim, deadline=deadline, now=now, **options)


def cartridge_facts(cart: LoadedCartridge) -> CartridgeFacts:
    """What the judge needs of a loaded cartridge."""
    return CartridgeFacts(cart.manifest.digest, cart.rom_digest, cart.controller, cart.signer, cart.signature.key,
                          cart.signature_status, tuple(cart.capabilities))


def _resolve(
    store: Store,
    cart: LoadedCartridge,
    trust: Trust,
    *,
    lim: ResolveLimits,
    deadline: Deadline,
    now: datetime,
    status_lists: list[dict[str, Any]] | None = None,
    allow_unknown_status: bool = False,
    check_evidence: bool = False,
    fetch_remote_status: StatusFetcher | None = None,
    reference: str = "",
    status_history: StatusHistory | None = None,
    replay: bool = True,
    log: bool = True,
    open_log: LogOpener | None = None,
) -> Resolution:
    """Resolve a loaded cartridge under ``deadline``: list → fetch → judge → replay → result.

    ``status_history`` is what this consumer remembers of status lists: a list whose sequence is
    below the highest seen is refused (``status_rollback``), and every list that verified raises
    the mark. Without it only the lists found in this run count (a first-time consumer).

    With ``replay`` (the default) every credential that decides the answer is re-derived from its game
    records (:mod:`acx_oci.services.consumer.replay`); ``replay=False`` believes a trusted key's numbers as signed.
    With ``log`` (the default) a credential of a verifier whose log the trust file pins must be in that log
    (:mod:`acx_oci.evaluation.log_check`); ``open_log`` opens the log's repository (default: ``open_store``).
    """
    facts = cartridge_facts(cart)
    pinned = pinned_keys(trust) if log else {}  # a bad log key in the trust file is exit 2 before any fetch
    phases = Phases()
    with phases.timed("fetch", less=("status",)):
        listed = list_attestations(store, facts.manifest_digest, lim, deadline)
        sources = StatusSources(supplied_lists(status_lists), fetch_remote_status, status_history)
        gathered = gather(store, listed.refs, facts.manifest_digest, check_evidence, lim, deadline, sources, phases)
        log_history = LogHistory(status_history.directory) if pinned and status_history is not None else None
        gathered = replace(gathered, material=replace(gathered.material, log_keys=pinned))
        logs = gather_logs(gathered.material, trust, log_history, deadline, open_log) if log else None
    cache = VerifiedCredentialCache(status_history.directory).view(trust) if status_history is not None else None
    gathered = replace(gathered, material=replace(gathered.material, logs=logs.views if logs else None,
                                                  known_proofs=known_proofs(gathered.material, cache)))
    dids = DidFetcher(trust) if fetch_remote_status is not None else None  # did:web online when HTTPS is allowed
    keys = dids.keys if dids is not None else offline_keys(trust)
    step = ReplayStep(store, gathered, trust, now, lim, keys, cache, phases)
    with phases.timed("verify", less=("replay",)):
        steps = judging(gathered.material, facts, trust, now, allow_unknown_status=allow_unknown_status,
                        replay=replay and not facts.tampered, ask_dids=dids is not None)
        judgement = answer_needs(steps, replay=step.confirm, dids=dids)  # the judge asks, we fetch
    with phases.timed("status"):
        remember_status(status_history, judgement, gathered, now)
        if logs is not None:
            remember_logs(log_history, logs, now)
    if cache is not None:
        for digest, proof_keys in judgement.proofs_verified.items():
            cache.remember(digest, proof_keys)
        cache.cache.flush()
    notes, partial = fetch_notes(listed.notes, listed.partial, gathered, len(listed.refs))
    replayed = replay_notes(facts, judgement, replay, deadline)
    verdicts = capability_verdicts(facts, judgement.accepted, judgement.rejected)
    history = fetch_attempt_records(store, facts.manifest_digest, lim, deadline)
    documents = record_documents(history.records, trust, dids)
    caps = with_attempts(verdicts, gathered.material, history.records, facts, trust, now, documents)
    return Resolution(
        reference=reference or str(store.reference),
        manifest_digest=facts.manifest_digest,
        rom_digest=facts.rom_digest,
        signature_status=facts.signature_status,
        signer=facts.signer,
        controller=facts.controller,
        capabilities=caps if logs is None else with_log_attempts(caps, logs.views, facts.rom_digest, trust),
        unmatched=tuple(sorted(judgement.unmatched, key=lambda r: r.digest)),
        referrers_seen=listed.seen,
        partial=partial or replayed.partial or history.partial,
        notes=(*notes, *replayed.notes, *history.notes, *(logs.notes if logs else (NO_LOG_NOTE,))),
        replayed=replay,
        classified_by_manifest=listed.classified,
        judged=frozenset(a.digest for a in gathered.material.attestations),
        phases=phases.to_json(),
        verifications=judgement.verifications,
    )


def known_proofs(material: Material, cache: TrustView | None) -> dict[str, frozenset[bytes]]:
    """The proofs the consumer's cache says verified before, for the credentials judged now (the judge's input)."""
    if cache is None:
        return {}
    digests = {a.credential_digest for a in material.attestations if a.credential_digest}
    return {d: keys for d in sorted(digests) if (keys := cache.proof_keys(d))}


def record_documents(records: tuple[FetchedRecord, ...], trust: Trust, dids: DidFetcher | None) -> DidDocuments:
    """The did:web documents the attempt records' (trusted) issuers need, fetched beforehand when allowed."""
    if dids is None:
        return DidDocuments(trust)
    issuers = {issuer_id(r.document) for r in records if isinstance(r.document, dict)}
    return dids.documents(i for i in issuers if i and trust.is_trusted_verifier(i))


def fetch_notes(listing_notes: tuple[str, ...], partial: bool, gathered: Gathered,
                wanted: int) -> tuple[tuple[str, ...], bool]:
    """The listing's and the fetch's notes, and whether a bound made the answer partial."""
    notes = [*listing_notes, *gathered.status_notes, *gathered.bound_notes]
    partial = partial or bool(gathered.bound_notes)
    if gathered.done < wanted:
        partial = True
        notes.append(f"checked {gathered.done} of {wanted} attestations")
    return tuple(notes), partial


def remember_status(history: StatusHistory | None, judgement: Judgement, gathered: Gathered, now: datetime) -> None:
    """Keep every status list that verified and is newer than the one kept (raising the remembered mark)."""
    if history is None:
        return
    material = gathered.material
    for (url, issuer), seq in judgement.status_seen.items():
        doc, kept = judgement.status_lists_seen.get((url, issuer)), material.kept_lists.get((url, issuer))
        if doc is not None and (kept is None or seq > list_sequence(kept)):
            history.keep(url, issuer, seq, doc, now)  # the newest list itself: older copies are then stale
        elif seq > material.min_sequences.get((url, issuer), 0):
            history.remember(url, issuer, seq, now)


@dataclass(frozen=True)
class Replayed:
    """Whether replay left the answer partial, and what it said."""

    partial: bool = False
    notes: tuple[str, ...] = ()


class ReplayStep:
    """The answer to the judge's :class:`~acx_oci.evaluation.judge.NeedReplay`: re-derive a credential that
    verified from its game records before it decides.

    The consumer's verdict cache answers for bytes replayed before (same record layers, same issuer keys);
    past the deadline it answers None (undecided: the answer is partial), never a false rejection.
    """

    def __init__(self, store: Store, gathered: Gathered, trust: Trust, now: datetime, lim: ResolveLimits,
                 keys: KeyResolver, cache: TrustView | None, phases: Phases) -> None:
        self.store, self.gathered, self.trust, self.now, self.lim = store, gathered, trust, now, lim
        self.keys, self.cache, self.phases = keys, cache, phases
        self.deadline = current_deadline()

    def confirm(self, acc: AcceptedCredential) -> Check | None:
        """The replay verdict of ``acc`` (None: the time bound passed first)."""
        if self.deadline is not None and self.deadline.expired():
            return None
        src = self.gathered.records[acc.attestation_digest]
        job = ReplayJob(acc.attestation_digest, acc.credential, acc.credential_digest, src.layers, src.evidence,
                        src.bundle)
        with self.phases.timed("replay"):
            signers = tuple(sorted(k.hex() for k in issuer_keys(acc.credential, self.keys)))
            layers = (*src.layers, *((src.bundle.digest,) if src.bundle else ()), *signers)
            hit = self.cache.replayed(acc.credential_digest, layers) if self.cache is not None else None
            if hit is not None:
                return hit
            verdict = replay_jobs(self.store, [job], self.trust, self.now, workers=self.lim.workers,
                                  resolve_keys=self.keys,
                                  tally=lambda n: self.phases.count("replay", 1, n))[acc.attestation_digest]
        if not verdict.ok and self.deadline is not None and self.deadline.expired():
            return None  # records cut short by the deadline: undecided, not refuted
        if self.cache is not None:
            self.cache.remember_replay(acc.credential_digest, layers, verdict)
        return verdict


def replay_notes(facts: CartridgeFacts, judgement: Judgement, replay: bool, deadline: Deadline) -> Replayed:
    """What the replay step says: off, a tampered cartridge, or cut short by the time bound."""
    if facts.tampered:
        tampered = ("the cartridge is tampered: no claim can be verified",)
        return Replayed(notes=tampered if replay else (*tampered, NO_REPLAY_NOTE))
    if not replay:
        return Replayed(notes=(NO_REPLAY_NOTE,))
    if judgement.unconfirmed:
        return Replayed(True, (time_bound_note(deadline) + f" (while replaying game records: "
                                                          f"{len(judgement.unconfirmed)} attestation(s) undecided)",))
    return Replayed()


NO_REPLAY_NOTE = ("replay is off (--no-replay): levels were NOT re-derived from the game records; the numbers a "
                  "trusted key signed were believed as signed (weaker)")


def resolve_cartridge(store: Store, target: str, trust: Trust, *, now: datetime, limits: ResolveLimits | None = None,
                      **options: Unpack[ResolveOptions]) -> Resolution:
    """Load the cartridge at ``target`` and resolve its claims (see :func:`resolve_loaded`)."""
    cart = load_cartridge(store, target, trust)
    return resolve_loaded(store, cart, trust, now=now, limits=limits, **options)


__all__ = ["CapabilityRecord", "ResolveLimits", "resolve_cartridge", "resolve_loaded"]
