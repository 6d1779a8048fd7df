"""Turn a cartridge's claims into verified proficiency by walking its referrers.

For every level attestation that refers to the cartridge manifest: fetch the
manifest and credential (in parallel, digest-verified, bounded in count,
bytes and time), find the credential's status list (the cartridge's
repository first, then files given by the user, then HTTPS when allowed),
and run every verification rule (a list older than the highest sequence this
consumer remembers, ``StatusHistory``, is a rollback). A claim is VERIFIED only when a credential
that passed all of them names it; the newest valid credential per capability
and benchmark wins, and the highest level among those is the effective one.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from acx_oci.errors import AcxError, DeadlineExceeded
from acx_oci.evaluation.checks import StatusCache, VerifyContext
from acx_oci.evaluation.verify import verify_level_credential
from acx_oci.model import statuslist
from acx_oci.model.capability import CapabilityRecord, parse_requirement
from acx_oci.model.credential import evidence_digest, issuer_id, level_result, status_entries
from acx_oci.model.rating import TIER_FLOOR
from acx_oci.model.resolution import UNPROVEN, VERIFIED, AcceptedCredential, CapabilityResolution, Rejection, Resolution
from acx_oci.model.rom import STATUS_TAMPERED
from acx_oci.oci.model import ANNOTATION_CREATED, ARTIFACT_ATTESTATION
from acx_oci.oci.store import ReferrerListing, Store
from acx_oci.services.attestation import ANN_CAPABILITY, fetch_status_list
from acx_oci.services.cartridge import LoadedCartridge, load_cartridge
from acx_oci.services.replay import FLOOR, instant, order_key, replay_deciding
from acx_oci.services.resolve_fetch import Fetched as _Fetched
from acx_oci.services.resolve_fetch import ResolveLimits, fetch_and_judge, time_bound_note
from acx_oci.services.statuscache import StatusHistory
from acx_oci.timeutil import Deadline, current_deadline, deadline_scope, parse_datetime
from acx_oci.trust.trustfile import Trust


def _status_url(credential: dict[str, Any]) -> str | None:
    entries = status_entries(credential)
    url = entries[0].get("statusListCredential") if entries else None
    return url if isinstance(url, str) else None


def _status_index(credential: dict[str, Any]) -> int | None:
    entries = status_entries(credential)
    index = entries[0].get("statusListIndex") if entries else None
    return int(index) if isinstance(index, str) and index.isascii() and index.isdigit() else None


def _sequence(status_list: dict[str, Any]) -> int:
    """A list's ``acx:sequence`` for ordering copies; -1 when malformed (it loses, and fails its check)."""
    try:
        return statuslist.list_sequence(status_list)
    except AcxError:
        return -1


def _evidence_bound(credential: dict[str, Any], present: set[str]) -> list[str]:
    """Evidence the credential names that is neither inline nor a layer of its attestation."""
    missing = []
    for item in credential.get("evidence") or []:
        digest = evidence_digest(item)
        if digest and digest not in present and not (isinstance(item, dict) and "acx:dsseEnvelope" in item):
            missing.append(digest)
    return missing


StatusFetcher = Callable[[str], dict[str, Any] | None]


def resolve_loaded(store: Store, cart: LoadedCartridge, trust: Trust, *, limits: ResolveLimits | None = None,
                   **kwargs: Any) -> Resolution:
    """Resolve an already-loaded cartridge (the gateway and ``pull`` reuse the load); see :func:`_resolve`.

    ``limits.deadline_seconds`` (or the caller's ambient deadline, when earlier) is enforced: fetches
    in flight are cut when it passes and the resolution comes back ``partial`` with the reason.
    """
    lim = limits or ResolveLimits()
    deadline = Deadline.after(lim.deadline_seconds).earliest(current_deadline())
    with deadline_scope(deadline):
        return _resolve(store, cart, trust, lim=lim, deadline=deadline, **kwargs)


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
) -> Resolution:
    """Resolve a loaded cartridge under ``deadline`` (entered as the ambient scope by the caller).

    ``status_history`` is what this consumer remembers of status lists: a list whose sequence is
    below the highest seen is refused (``status_rollback``), and every list that verified raises
    the mark. Without it only the lists found in this run count (a first-time consumer).

    With ``replay`` (the default) every credential that decides the answer is re-derived from its game
    records (:mod:`acx_oci.services.replay`); ``replay=False`` believes a trusted key's numbers as signed.
    """
    notes: list[str] = []
    partial = False
    subject = cart.manifest.digest
    try:
        listing = store.referrers(subject, ARTIFACT_ATTESTATION)
    except DeadlineExceeded:
        listing, partial = ReferrerListing(descriptors=[], source="none", partial=True), True
        notes.append(time_bound_note(deadline) + " (while listing referrers)")
    refs = listing.descriptors
    seen = len(refs)
    notes += listing.notes
    if not partial and listing.partial:
        partial = True
        notes.append("the store hit a bound while listing referrers (tags or pages)")
    if len(refs) > lim.max_referrers:
        refs = sorted(refs, key=lambda d: (parse_datetime(d.annotations.get(ANNOTATION_CREATED)) or FLOOR,
                                           d.digest), reverse=True)
        refs = refs[: lim.max_referrers]
        partial = True
        notes.append(f"{seen} attestations found; only the newest {lim.max_referrers} were checked (--max-referrers)")

    supplied = {str(s.get("id")): s for s in status_lists or [] if isinstance(s, dict)}

    candidates_by_url: dict[str, list[dict[str, Any]]] = {}
    bits_by_list: dict[int, bytes | None] = {}

    def status_candidates(url: str) -> list[dict[str, Any]]:
        """Every list published for ``url``: the cartridge's repository, user files, HTTPS if allowed."""
        if url in candidates_by_url:
            return candidates_by_url[url]
        found: list[dict[str, Any]] = []
        try:
            published = fetch_status_list(store, url)
            if published:
                found.append(published[0])
        except AcxError as exc:
            notes.append(f"status list {url}: {exc}")
        if url in supplied:
            found.append(supplied[url])
        if fetch_remote_status is not None:
            try:
                remote = fetch_remote_status(url)
                if remote is not None:
                    found.append(remote)
            except AcxError as exc:
                notes.append(f"status list {url}: {exc}")
        candidates_by_url[url] = found
        return found

    def bit_is_set(doc: dict[str, Any], index: int | None) -> bool:
        if id(doc) not in bits_by_list:
            try:
                bits_by_list[id(doc)] = statuslist.list_bits(doc)
            except AcxError:
                bits_by_list[id(doc)] = None
        bits = bits_by_list[id(doc)]
        return bits is not None and index is not None and 0 <= index < len(bits) * 8 and statuslist.get_bit(bits,
                                                                                                          index)

    def status_list_for(credential: dict[str, Any], url: str) -> dict[str, Any] | None:
        """The list to judge ``credential`` by: one with its bit set if any source has one, else the newest.

        A revocation never clears a bit, so a list that shows the bit set wins
        (its proof and issuer are still checked): a repository owner who puts
        back an older, pre-revocation copy of the verifier's list loses to any
        fresher copy the user supplies or fetches. Otherwise (and among those
        with the bit set) the highest ``acx:sequence`` wins, then the latest
        ``validFrom``; against an owner and no other source, the remembered
        sequence and the list's one-day validity are the defence.
        """
        found = status_candidates(url)
        index = _status_index(credential)
        revoking = [c for c in found if bit_is_set(c, index)]
        return max(revoking or found, key=lambda c: (_sequence(c), parse_datetime(c.get("validFrom")) or FLOOR),
                   default=None)

    highest_seen: dict[tuple[str, str], int] = {}
    newly_seen: dict[tuple[str, str], int] = {}

    def min_sequence(url: str, issuer: str | None) -> int:
        """The highest sequence this consumer has seen for ``url`` as signed by ``issuer`` (0: none)."""
        if status_history is None or issuer is None:
            return 0
        if (url, issuer) not in highest_seen:
            highest_seen[(url, issuer)] = status_history.highest(url, issuer)
        return highest_seen[(url, issuer)]

    claims = {c.id: c for c in cart.capabilities}
    accepted: dict[str, list[AcceptedCredential]] = {cid: [] for cid in claims}
    rejected: dict[str, list[Rejection]] = {cid: [] for cid in claims}
    unmatched: list[Rejection] = []
    verdicts: dict[tuple[str | None, str | None, tuple[str, ...] | None], tuple[list[str], list[str]]] = {}
    fetched: dict[str, _Fetched] = {}  # attestation digest -> what was fetched (for replay)
    status_cache: StatusCache = {}

    judged: set[str] = set()

    def judge(item: _Fetched) -> None:
        """Verify one fetched attestation (runs on the main thread while others download)."""
        judged.add(item.descriptor.digest)
        cred = item.credential
        res = (level_result(cred) or {}) if cred else {}
        # The claim a credential counts for is the one its signed acx:capabilityId names, never the
        # (unsigned) annotation: one offered for another claim is a capability_mismatch there.
        cap_id = str(res.get("acx:capabilityId") or "")
        codes, messages = list(item.codes), list(item.messages)
        offered = item.descriptor.annotations.get(ANN_CAPABILITY, "")
        if cap_id not in claims and offered in claims:
            if cred is not None:  # (a malformed one was rejected for that already)
                codes.append("capability_mismatch")
                messages.append(f"offered for claim {claims[offered].display()} ({offered}), but the credential is "
                                f"for capability {cap_id or '(none)'}")
            cap_id = offered
        issuer = issuer_id(cred) if cred is not None else None
        if cred is not None:
            url = _status_url(cred)
            # the evidence judged is this attestation's own layers: a copy of the credential with other (or no)
            # records must not decide the verdict of the attestation that carries the real ones
            key = (item.credential_digest, url, None if item.evidence is None else tuple(sorted(item.evidence)))
            if key not in verdicts:
                chosen = status_list_for(cred, url) if url else None
                ctx = VerifyContext(
                    trust=trust, now=now, expected_rom_digest=cart.rom_digest, expected_manifest_digest=subject,
                    cartridge_controller=cart.controller, rom_signer=cart.signer,
                    rom_signer_key=cart.signature.key,
                    status_list=chosen, status_min_sequence=min_sequence(url, issuer) if url else 0,
                    allow_unknown_status=allow_unknown_status, allow_network=fetch_remote_status is not None,
                    evidence=item.evidence, status_cache=status_cache,
                )
                checks = verify_level_credential(cred, ctx).checks
                if url and issuer and chosen is not None and any(
                        c.name == "status_list" and c.ok and not c.skipped for c in checks):
                    # the list verified as the issuer's and is not older than what we knew: remember it
                    newly_seen[(url, issuer)] = max(newly_seen.get((url, issuer), 0), _sequence(chosen))
                failed = [c for c in checks if not c.ok]
                verdicts[key] = ([c.code for c in failed], [c.message for c in failed])
            vcodes, vmsgs = verdicts[key]
            codes += vcodes
            messages += vmsgs
            missing = _evidence_bound(cred, item.evidence_present)
            if missing:
                codes.append("evidence_missing")
                messages.append(f"{len(missing)} evidence digest(s) are neither inline nor layers of the attestation")
        if codes:
            rej = Rejection(item.descriptor.digest, tuple(dict.fromkeys(codes)), tuple(messages),
                            item.credential_digest, issuer)
            (rejected[cap_id] if cap_id in claims else unmatched).append(rej)
            return
        assert cred is not None and item.credential_digest is not None
        acc = AcceptedCredential(
            attestation_digest=item.descriptor.digest,
            credential_digest=item.credential_digest,
            issuer=issuer or "",
            capability_id=cap_id,
            benchmark_id=str(res.get("acx:benchmarkId")),
            benchmark_version=str(res.get("acx:benchmarkVersion")),
            mu=float(res["acx:ratingMu"]),
            sigma=float(res["acx:ratingSigma"]),
            games=int(res["acx:gamesPlayed"]),
            acx_level=int(res["acx:acxLevel"]),
            career_tier=str(res["acx:careerTier"]),
            valid_from=str(cred.get("validFrom", "")),
            credential=cred,
            solver=str(res.get("acx:solver", "reference")),
        )
        if cap_id in claims:
            accepted[cap_id].append(acc)
            fetched[acc.attestation_digest] = item
        else:
            unmatched.append(Rejection(item.descriptor.digest, ("capability_not_claimed",),
                                       (f"the credential proves {cap_id}, which this cartridge does not claim",),
                                       item.credential_digest, issuer))

    done, bound_notes = fetch_and_judge(store, refs, subject, check_evidence, lim, deadline, judge)
    if bound_notes:
        partial = True
        notes += bound_notes
    if done < len(refs):
        partial = True
        notes.append(f"checked {done} of {len(refs)} attestations")

    if status_history is not None:
        for (url, issuer), seq in newly_seen.items():
            if seq > highest_seen.get((url, issuer), 0):
                status_history.remember(url, issuer, seq, now)

    tampered = cart.signature_status == STATUS_TAMPERED
    if tampered:
        notes.append("the cartridge is tampered: no claim can be verified")
    if replay and not tampered and deadline.expired():
        partial = True
        notes.append("the time bound passed before the deciding credentials were replayed: none counts")
        for accs in accepted.values():
            accs.clear()
    elif replay and not tampered:
        records = {k: (f.evidence_order, f.evidence) for k, f in fetched.items()}
        replayed = replay_deciding(store, accepted, records, trust, now, lim.workers, fetch_remote_status is not None)
        for cid, failures in replayed.items():
            rejected[cid] += failures
        if deadline.expired():  # records cut short fail their replay: say why they may be missing
            partial = True
            notes.append(time_bound_note(deadline) + " (while replaying game records)")
    elif not replay:
        notes.append(NO_REPLAY_NOTE)
    results = []
    for cid, cap in claims.items():
        newest: dict[tuple[str, str], AcceptedCredential] = {}
        for acc in accepted[cid]:
            k = (acc.benchmark_id, acc.benchmark_version)
            if k not in newest or order_key(acc) > order_key(newest[k]):
                newest[k] = acc
        winners = tuple(sorted(newest.values(), key=lambda a: (a.acx_level, instant(a), a.credential_digest),
                               reverse=True))
        best = winners[0] if winners and not tampered else None
        results.append(CapabilityResolution(cap, VERIFIED if best else UNPROVEN, best, winners,
                                            tuple(sorted(rejected[cid], key=lambda r: r.digest))))
    return Resolution(
        reference=reference or str(store.reference),
        manifest_digest=subject,
        rom_digest=cart.rom_digest,
        signature_status=cart.signature_status,
        signer=cart.signer,
        controller=cart.controller,
        capabilities=tuple(results),
        unmatched=tuple(sorted(unmatched, key=lambda r: r.digest)),
        referrers_seen=seen,
        partial=partial,
        notes=tuple(notes),
        replayed=replay,
        classified_by_manifest=listing.classified,
        judged=frozenset(judged),
    )


NO_REPLAY_NOTE = ("replay is off (--no-replay): levels were NOT re-derived from the game records; the numbers a "
                  "trusted key signed were believed as signed (weaker)")


def resolve_cartridge(store: Store, target: str, trust: Trust, *, now: datetime, **kwargs: Any) -> Resolution:
    """Load the cartridge at ``target`` and resolve its claims (see :func:`resolve_loaded`)."""
    cart = load_cartridge(store, target, trust)
    return resolve_loaded(store, cart, trust, now=now, **kwargs)


def meets(cap: CapabilityResolution, min_tier_floor: int | None, min_level: int | None,
          model: str | None = None) -> bool:
    """Whether a resolved claim satisfies a level/tier floor (only VERIFIED claims can); with ``model``, only a
    credential earned with that model counts (a level is a level of this ROM *with this model*)."""
    if cap.effective != VERIFIED or cap.best is None:
        return False
    pool = [cap.best] if model is None else [a for a in cap.accepted if (a.model or {}).get("id") == model]
    floor = max(min_level or 0, min_tier_floor or 0)
    return any(a.acx_level >= floor for a in pool)


def claims_for(resolution: Resolution, task_type: str) -> list[CapabilityResolution]:
    return [c for c in resolution.capabilities if c.capability.task_type == task_type]


__all__ = ["CapabilityRecord", "ResolveLimits", "claims_for", "meets", "resolve_cartridge", "resolve_loaded"]


def requirement_failures(resolution: Resolution, requirements: list[str]) -> list[str]:
    """Human sentences for each ``TASKTYPE>=TIER`` the resolution does not meet."""
    failures = []
    for text in requirements:
        req = parse_requirement(text)
        floor = TIER_FLOOR[req.min_tier] if req.min_tier else None
        caps = claims_for(resolution, req.task_type)
        if not any(meets(c, floor, req.min_level, req.model) for c in caps):
            best = [c.best for c in caps if c.effective == VERIFIED and c.best]
            if req.model is not None:
                best = [a for c in caps if c.effective == VERIFIED for a in c.accepted
                        if (a.model or {}).get("id") == req.model]
                if not best:
                    failures.append(f"{text}: no verified level earned with model {req.model}")
                    continue
            codes = sorted({c for cap in caps for r in cap.rejected for c in r.codes})  # say *why* (e.g. revoked)
            found = (f"best verified is {best[0].career_tier} (level {best[0].acx_level})" if best
                     else f"no verified claim ({'rejected: ' + ', '.join(codes) if codes else 'no attestation'})"
                     if caps else "no such claim")
            failures.append(f"{text}: {found}")
    return failures
