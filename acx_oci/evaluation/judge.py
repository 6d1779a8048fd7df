"""The judge: bytes already fetched in, verdicts out (no I/O, like python-tuf's trusted metadata set).

:mod:`acx_oci.services.consumer.resolve_fetch` gathers every byte a decision needs (the
attestations, their credentials and game records, every copy of each status list
and the sequence this consumer remembers for it) into a :class:`Material`;
:func:`judging` runs every verification rule on it and says, per
attestation, accepted or rejected with reasons — per superseding key newest first, stopping
at the first credential that verifies (and replays), so
the older ones are ``superseded`` unverified and a forged "newer" one costs one failed
verification; :func:`capability_verdicts` picks,
per claim, the newest valid credential per superseding key (issuer, ROM, benchmark
digest, capability) and the highest level among those. Replay (re-deriving a credential
from its records, which may need records the listing did not carry) and a did:web document beyond the
trust file are asked of the caller: the judge yields :class:`NeedReplay` / :class:`NeedDidDocument` and goes
on with the answer (:func:`acx_oci.services.consumer.answers.answer_needs` drives it; :func:`judge_credentials`
asks nothing). The consumer's proof cache is data both ways (``Material.known_proofs`` in,
``Judgement.proofs_verified`` out): nothing here is handed a callable that does I/O.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from acx_oci import reasons
from acx_oci.errors import AcxError
from acx_oci.evaluation.checks import Check, KeyResolver, StatusCache, VerifyContext, bad
from acx_oci.evaluation.did_documents import MAX_DID_ROUNDS, DidDocuments
from acx_oci.evaluation.judge_input import (
    Answer,
    CartridgeFacts,
    Expected,
    FetchedAttestation,
    Judgement,
    JudgeSteps,
    Material,
    Need,
    NeedDidDocument,
    NeedReplay,
    StatusKey,
    settled,
)
from acx_oci.evaluation.log_check import log_failure, log_positions, log_superseded
from acx_oci.evaluation.seed_rules import RELAXED_CODE
from acx_oci.evaluation.status_choice import FLOOR, choose_status_list, sequence, status_url
from acx_oci.evaluation.verify import check_schema, verify_level_credential
from acx_oci.model import (
    UNPROVEN,
    VERIFIED,
    AcceptedCredential,
    CapabilityRecord,
    CapabilityResolution,
    LevelCredential,
    Rejection,
    evidence_digest,
)
from acx_oci.timeutil import parse_datetime
from acx_oci.trust import Trust


def _evidence_bound(credential: LevelCredential, present: frozenset[str]) -> list[str]:
    """Evidence the credential names that is neither inline nor a layer of its attestation."""
    missing = []
    for item in credential.evidence:  # (any shape: the schema is checked with the other rules)
        digest = evidence_digest(item)
        if digest and digest not in present and not (isinstance(item, dict) and "acx:dsseEnvelope" in item):
            missing.append(digest)
    return missing


Claims = Mapping[str, CapabilityRecord] | None  # None: no cartridge (``vc verify``), any capability counts


def _claimed(cap_id: str, claims: Claims) -> bool:
    return claims is None or cap_id in claims


def _claim_of(item: FetchedAttestation, claims: Claims) -> tuple[str, list[str], list[str]]:
    """The claim an attestation counts for, and a capability_mismatch when it was offered for another.

    The claim is the one the signed ``acx:capabilityId`` names, never the (unsigned) annotation.
    """
    cred = item.credential
    cap_id = cred.view.capability_id if cred is not None else ""
    codes, messages = list(item.codes), list(item.messages)
    if claims is not None and cap_id not in claims and item.offered in claims:
        if cred is not None:  # (a malformed one was rejected for that already)
            codes.append(reasons.CAPABILITY_MISMATCH)
            messages.append(f"offered for claim {claims[item.offered].display()} ({item.offered}), but the "
                            f"credential is for capability {cap_id or '(none)'}")
        cap_id = item.offered
    return cap_id, codes, messages


def proof_keys(credential: LevelCredential, documents: DidDocuments) -> frozenset[bytes]:
    """The public keys of the credential's proofs' verification methods (what makes two DIDs one verifier)."""
    out: set[bytes] = set()
    for proof in credential.proofs:
        vm = proof.get("verificationMethod") if isinstance(proof, dict) else None
        if isinstance(vm, str):
            try:
                out |= {key for _, key in documents.keys(vm)}
            except AcxError:
                continue
    return frozenset(out)


def _accepted(item: FetchedAttestation, cap_id: str, issuer: str | None, keys: frozenset[bytes]) -> AcceptedCredential:
    cred, digest = item.credential, item.credential_digest
    assert cred is not None and digest is not None
    view = cred.view  # (the schema verified: every field below is there, typed)
    res = view.result
    return AcceptedCredential(
        attestation_digest=item.digest, credential_digest=digest, issuer=issuer or "", capability_id=cap_id,
        benchmark_id=view.benchmark_id, benchmark_version=view.benchmark_version,
        mu=float(res["acx:ratingMu"]), sigma=float(res["acx:ratingSigma"]), games=int(res["acx:gamesPlayed"]),
        acx_level=int(res["acx:acxLevel"]), career_tier=str(res["acx:careerTier"]), valid_from=view.valid_from,
        credential=cred, solver=str(res.get("acx:solver", "reference")), rom_digest=view.rom_digest,
        benchmark_digest=view.benchmark_digest, proof_keys=keys,
    )


@dataclass
class _Run:
    """One judgement's memos: verdicts per (credential, list, records), status-list checks and bits."""

    material: Material
    expected: Expected
    trust: Trust
    now: datetime
    allow_unknown_status: bool
    documents: DidDocuments  # the trust file's, did:key, and those the caller answered (NeedDidDocument)
    verifications: int = 0  # credentials put through every rule (what a flood of forgeries costs)
    verdicts: dict[tuple[Any, ...], tuple[list[str], list[str]]] = field(default_factory=dict)
    checks: dict[tuple[Any, ...], tuple[Check, ...]] = field(default_factory=dict)  # per verdict: every rule
    judged: dict[str, tuple[Check, ...]] = field(default_factory=dict)  # per attestation verified: its rules
    status_cache: StatusCache = field(default_factory=dict)
    bits: dict[int, bytes | None] = field(default_factory=dict)
    seen: dict[StatusKey, int] = field(default_factory=dict)
    seen_lists: dict[StatusKey, dict[str, Any]] = field(default_factory=dict)
    relaxed: dict[Any, tuple[str, ...]] = field(default_factory=dict)  # per verdict key: the relaxations it used
    proofs: dict[str, frozenset[bytes]] = field(default_factory=dict)  # proofs newly verified (Judgement's)

    def keys(self) -> KeyResolver:
        """The key resolver verification uses: the trust file, did:key, and the documents the caller gave."""
        return self.documents.keys

    def verdict_key(self, item: FetchedAttestation) -> tuple[str | None, str | None, tuple[str, ...] | None]:
        """What one verdict is memoised by: the credential's bytes, its list URL, and the records judged."""
        url = status_url(item.credential) if item.credential is not None else None
        return (item.credential_digest, url, None if item.evidence is None else tuple(sorted(item.evidence)))

    def rules(self, item: FetchedAttestation, issuer: str | None, cache: StatusCache) -> tuple[list[Check],
                                                                                                 dict[str, Any] | None]:
        """One verification of ``item``'s credential with the documents known now: every rule, and the list chosen."""
        cred = item.credential
        assert cred is not None
        self.documents.missing.clear()
        url = self.verdict_key(item)[1]
        known = self.material.known_proofs.get(item.credential_digest or "")
        kept = self.material.kept_lists.get((url, issuer)) if url and issuer else None
        found = self.material.status_lists.get(url, ()) if url else ()
        chosen = choose_status_list(cred, found if kept is None else (*found, kept), self.bits) if url else None
        floor = self.material.min_sequences.get((url, issuer), 0) if url and issuer else 0
        exp = self.expected
        ctx = VerifyContext(
            trust=self.trust, now=self.now, expected_rom_digest=exp.rom_digest,
            expected_manifest_digest=exp.manifest_digest, cartridge_controller=exp.controller,
            rom_signer=exp.signer, rom_signer_key=exp.signer_key, status_list=chosen,
            status_min_sequence=floor, allow_unknown_status=self.allow_unknown_status,
            evidence=None if item.evidence is None else dict(item.evidence), status_cache=cache,
            resolve_keys=self.keys(),
        )
        return verify_level_credential(
            cred, ctx, proof_known=bool(known) and known == proof_keys(cred, self.documents)).checks, chosen

    def verify(self, item: FetchedAttestation, issuer: str | None) -> Generator[Need, Answer, tuple[list[str],
                                                                                                 list[str]]]:
        """Every rule's failures for ``item``'s credential (memoised: a credential copied many times is judged once).

        The evidence judged is this attestation's own layers: a copy of the credential with other (or no)
        records must not decide the verdict of the attestation that carries the real ones. A did:web the rules
        lacked a document for is asked of the caller (:class:`NeedDidDocument`) and the rules run again, at most
        :data:`MAX_DID_ROUNDS` times (a round's status-list memos are dropped when its keys were incomplete).
        """
        cred = item.credential
        assert cred is not None
        key = self.verdict_key(item)
        url = key[1]
        if key in self.verdicts:
            return self.verdicts[key]
        self.verifications += 1
        for round_ in range(1, MAX_DID_ROUNDS + 1):
            cache = dict(self.status_cache)
            checks, chosen = self.rules(item, issuer, cache)
            ask, refused = self.documents.to_ask()
            if round_ == MAX_DID_ROUNDS or not (ask or refused):
                break
            for did_value in ask:
                answer = yield NeedDidDocument(did_value)
                self.documents.answer(did_value, None if isinstance(answer, Check) else answer)
        self.status_cache.update(cache)
        if url and issuer and chosen is not None and sequence(chosen) >= self.seen.get((url, issuer), 0) and any(
                c.name == "status_list" and c.ok and not c.skipped for c in checks):
            # the list verified as the issuer's and is not older than what we knew: remember it (and keep it)
            self.seen[(url, issuer)] = sequence(chosen)
            self.seen_lists[(url, issuer)] = chosen
        failed = [c for c in checks if not c.ok]
        self.checks[key] = tuple(checks)
        self.verdicts[key] = ([c.code for c in failed], [c.message for c in failed])
        self.relaxed[key] = tuple(c.message for c in checks if c.ok and c.code == RELAXED_CODE)
        digest = item.credential_digest
        if not failed and digest and (keys := proof_keys(cred, self.documents)) \
                and keys != self.material.known_proofs.get(digest):
            self.proofs[digest] = keys
        return self.verdicts[key]

    def judge_one(self, item: FetchedAttestation, cap_id: str, codes: list[str],
                  messages: list[str]) -> Generator[Need, Answer, AcceptedCredential | Rejection]:
        """One attestation's verdict: every rule (verified once) and the evidence bound."""
        if item.credential is not None and not item.credential.strict:  # claims read laxly to order the walk
            try:
                strict = item.credential.strictly(f"credential {item.credential_digest}")
            except AcxError as exc:
                return Rejection(item.digest, tuple(dict.fromkeys((*item.codes, reasons.SCHEMA_INVALID))),
                                 (*item.messages, str(exc)), item.credential_digest, item.credential.issuer)
            item = replace(item, credential=strict)
        cred = item.credential
        issuer = cred.issuer if cred is not None else None
        schema = check_schema(cred) if cred is not None else None
        if schema is not None and not schema.ok:  # not a level credential: judged no further, the schema says why
            return Rejection(item.digest, tuple(dict.fromkeys((*item.codes, reasons.SCHEMA_INVALID))),
                             (*item.messages, schema.message), item.credential_digest, issuer)
        if cred is not None:
            # found beside the rules, kept as checks too: (check name, code, sentence)
            extra = [(c, c, m) for c, m in zip(codes, messages, strict=False)]
            vcodes, vmsgs = yield from self.verify(item, issuer)
            logged = None if self.material.logs is None else log_failure(
                self.trust, self.material.log_keys, self.material.logs, cred, item.credential_digest, item.log_proof,
                int(self.now.timestamp()))
            if logged is not None and logged.code is not None:
                extra.append((LOG_CHECK, logged.code, logged.message))
            missing = [] if item.records_bundled else _evidence_bound(cred, item.evidence_present)
            if missing:
                extra.append(("evidence_bound", reasons.EVIDENCE_MISSING,
                              f"{len(missing)} evidence digest(s) are neither inline nor layers of the attestation"))
            self.judged[item.digest] = (*self.checks[self.verdict_key(item)], *(bad(*e) for e in extra))
            codes = [*codes, *vcodes, *(c for _, c, _ in extra[len(codes):])]
            messages = [*messages, *vmsgs, *(m for _, _, m in extra[len(messages):])]
        claims = None if self.expected.claims is None else {c.id for c in self.expected.claims}
        if codes:
            return Rejection(item.digest, tuple(dict.fromkeys(codes)), tuple(messages), item.credential_digest, issuer)
        if claims is None or cap_id in claims:
            assert cred is not None
            return replace(_accepted(item, cap_id, issuer, proof_keys(cred, self.documents)),
                           relaxed=self.relaxed.get(self.verdict_key(item), ()))
        return Rejection(item.digest, (reasons.CAPABILITY_NOT_CLAIMED,),
                         (f"the credential proves {cap_id}, which this cartridge does not claim",),
                         item.credential_digest, issuer)


LOG_CHECK = "transparency_log"  # the name of the log rule's check
GroupKey = tuple[str, str, str, str]


def group_key(credential: LevelCredential, cap_id: str) -> GroupKey:
    """The superseding key a credential *claims* (issuer, ROM, benchmark digest, capability), before it verifies.

    A forger can claim any key; it then fails its own verification, which costs one verification, no more.
    """
    return credential.view.supersede_key(cap_id)


def _claimed_order(item: FetchedAttestation, positions: Mapping[str, tuple[str, int]]) -> tuple[bool, int, datetime,
                                                                                                  str]:
    """:func:`newer_key` on the unverified credential: the log position its proof claims (only for an issuer
    whose log the trust file pins, so the claim is checked when it is tried), then its claimed ``validFrom``,
    then its digest. The log orders what a clock cannot (two attempts in one second, a backdated validFrom)."""
    cred = item.credential
    pos = positions.get(item.digest)
    valid_from = cred.valid_from if cred is not None else None
    return (pos is not None, pos[1] if pos else 0, parse_datetime(valid_from) or FLOOR,
            item.credential_digest or "")


def _pinned_positions(material: Material, trust: Trust) -> dict[str, tuple[str, int]]:
    """Attestation → (origin, index) its log proof claims, for credentials of log-pinned issuers only: an
    unpinned issuer's proof is never checked, so a forged one must not order anything."""
    if material.logs is None:
        return {}
    return log_positions({a.digest: a.log_proof for a in material.attestations
                          if a.credential is not None and trust.log_for(a.credential.issuer or "") is not None})


def _superseded(item: FetchedAttestation, by: AcceptedCredential | Rejection) -> Rejection:
    issuer = item.credential.issuer if item.credential is not None else None
    if isinstance(by, Rejection):  # the log holds a later issued attempt of this key
        return Rejection(item.digest, (reasons.SUPERSEDED,), (f"{by.messages[0]}; not verified",),
                         item.credential_digest, issuer)
    return Rejection(item.digest, (reasons.SUPERSEDED,),
                     (f"superseded by credential {by.credential_digest} from the same issuer (validFrom "
                      f"{by.valid_from}, level {by.acx_level}); not verified: only the newest credential that "
                      "verifies decides",), item.credential_digest, issuer)


def judge_credentials(material: Material, cart: CartridgeFacts | Expected, trust: Trust, now: datetime, *,
                      allow_unknown_status: bool = False) -> Judgement:
    """:func:`judging` with nothing to ask: no replay, keys from the trust file and did:key only."""
    return settled(judging(material, cart, trust, now, allow_unknown_status=allow_unknown_status))


def judging(material: Material, cart: CartridgeFacts | Expected, trust: Trust, now: datetime, *,
            allow_unknown_status: bool = False, replay: bool = False, ask_dids: bool = False) -> JudgeSteps:
    """Judge the fetched attestations: accepted under the claim it proves, else rejected with every reason.

    Per superseding key (:func:`group_key`) the credentials are verified newest first (by the pinned log's
    order where the trust file pins the issuer's log, else by validFrom) and the walk stops at the first that
    verifies (and, with ``replay``, whose replay the caller answers with a passing check: the judge yields a
    :class:`NeedReplay` and goes on with the answer): every older one is listed ``superseded``
    without being verified. One with a later issued attempt of its key in the log is superseded itself,
    and so is every older one (the newer result need not be in the registry any more). An answer of
    None (the caller could not decide, e.g. a deadline) stops that key's walk with nothing accepted; those
    attestations are in ``Judgement.unconfirmed``.
    Attestations that cannot decide (a fetch-time defect, an unclaimed capability) are verified once each so
    every reason is reported. ``Material.known_proofs`` holds proofs this consumer verified before (same bytes,
    same keys); ``Judgement.proofs_verified`` the ones newly verified, for the caller to keep. Keys resolve from
    the trust file and did:key; with ``ask_dids`` a did:web beyond the trust file is asked of the caller
    (:class:`NeedDidDocument`, answered with the document or why there is none), else it fails to resolve.
    """
    expected = cart.expected if isinstance(cart, CartridgeFacts) else cart
    run = _Run(material, expected, trust, now, allow_unknown_status, DidDocuments(trust, ask_dids))
    claims = None if expected.claims is None else {c.id: c for c in expected.claims}
    accepted: dict[str, list[AcceptedCredential]] = {cid: [] for cid in claims or {}}
    rejected: dict[str, list[Rejection]] = {cid: [] for cid in claims or {}}
    unmatched: list[Rejection] = []
    groups: dict[GroupKey, list[FetchedAttestation]] = {}
    unconfirmed: list[str] = []
    for item in material.attestations:
        cap_id, codes, messages = _claim_of(item, claims)
        if item.credential is not None and not codes and _claimed(cap_id, claims):
            groups.setdefault(group_key(item.credential, cap_id), []).append(item)
            continue
        outcome = yield from run.judge_one(item, cap_id, codes, messages)
        if isinstance(outcome, AcceptedCredential):  # (only a claimed capability with no defect is accepted)
            accepted.setdefault(cap_id, []).append(outcome)
        else:
            (rejected.setdefault(cap_id, []) if _claimed(cap_id, claims) else unmatched).append(outcome)
    positions = _pinned_positions(material, trust)
    for key, group in groups.items():
        cap_id = key[3]
        accepted.setdefault(cap_id, [])
        rejected.setdefault(cap_id, [])
        decided: AcceptedCredential | Rejection | None = None
        walk = sorted(group, key=lambda it: _claimed_order(it, positions), reverse=True)
        for i, item in enumerate(walk):
            if decided is not None:
                if isinstance(decided, AcceptedCredential) and item.credential_digest == decided.credential_digest:
                    # a copy of the deciding credential in another referrer is judged with its own evidence, so
                    # one without game records is named for that whichever of the two was fetched first
                    copy = yield from run.judge_one(item, cap_id, [], [])
                    answer = (yield NeedReplay(copy)) if replay and isinstance(copy, AcceptedCredential) else None
                    if isinstance(answer, Check) and not answer.ok:
                        copy = Rejection(item.digest, (answer.code,), (answer.message,), item.credential_digest,
                                         decided.issuer)
                    if isinstance(copy, Rejection):
                        rejected[cap_id].append(copy)
                        continue
                rejected[cap_id].append(_superseded(item, decided))
                continue
            outcome = yield from run.judge_one(item, cap_id, [], [])
            if not isinstance(outcome, AcceptedCredential):
                rejected[cap_id].append(outcome)
                continue
            if material.logs is not None:  # a later issued attempt in the log: this one and all older lose
                _, gone = log_superseded([outcome], positions, material.logs)
                if gone:
                    rejected[cap_id].append(gone[0])
                    decided = gone[0]
                    continue
            answer = (yield NeedReplay(outcome)) if replay else None
            verdict = answer if isinstance(answer, Check) else None  # (anything else: undecided)
            if replay and verdict is None:
                unconfirmed += [it.digest for it in walk[i:]]
                break
            if verdict is not None and not verdict.ok:
                rejected[cap_id].append(Rejection(item.digest, (verdict.code,), (verdict.message,),
                                                  outcome.credential_digest, outcome.issuer))
                continue
            accepted[cap_id].append(outcome)
            decided = outcome
    return Judgement({k: tuple(v) for k, v in accepted.items()}, {k: tuple(v) for k, v in rejected.items()},
                     tuple(unmatched), dict(run.seen), run.verifications, tuple(unconfirmed),
                     dict(run.seen_lists), dict(run.judged), dict(run.proofs))


def instant(acc: AcceptedCredential) -> datetime:
    """validFrom as an instant (``-05:00`` and ``Z`` compare by time, not by text)."""
    return parse_datetime(acc.valid_from) or FLOOR


def order_key(acc: AcceptedCredential) -> tuple[datetime, int, str]:
    """Newest first; a tie at the same instant goes to the higher level, then the digest (deterministic)."""
    return instant(acc), acc.acx_level, acc.credential_digest


def newer_key(acc: AcceptedCredential) -> tuple[datetime, str]:
    """The superseding order (the shared contract): later ``validFrom``, a tie broken by the credential digest.

    The level plays no part: a verifier's newer verdict replaces its older one whether it is higher or lower.
    """
    return instant(acc), acc.credential_digest


def supersede(accepted: tuple[AcceptedCredential, ...]) -> tuple[tuple[AcceptedCredential, ...], tuple[Rejection, ...]]:
    """Per superseding key the newest credential that verified decides; every older one is ``superseded``.

    Only credentials that passed every check (and replay) are here, so a forged or failing "newer" one
    was rejected for its own reason and cannot hide the valid older one; an older one is superseded
    even while its issuer has not revoked it yet (deleting the newer one then resurrects nothing once
    the issuer's revocation is published, and a stale list cannot resurrect it while the newer one stands).
    """
    newest: dict[tuple[str, str, str, str], AcceptedCredential] = {}
    for acc in accepted:
        k = acc.supersede_key
        if k not in newest or newer_key(acc) > newer_key(newest[k]):
            newest[k] = acc
    current = tuple(a for a in accepted if newest[a.supersede_key] is a)
    older = tuple(
        Rejection(a.attestation_digest, (reasons.SUPERSEDED,),
                  (f"superseded by credential {newest[a.supersede_key].credential_digest} from the same issuer "
                   f"(validFrom {newest[a.supersede_key].valid_from}, level {newest[a.supersede_key].acx_level})",),
                  a.credential_digest, a.issuer)
        for a in accepted if newest[a.supersede_key] is not a)
    return current, older


def capability_verdicts(cart: CartridgeFacts, accepted: Mapping[str, tuple[AcceptedCredential, ...]],
                        rejected: Mapping[str, tuple[Rejection, ...]]) -> tuple[CapabilityResolution, ...]:
    """Per claim: the newest valid credential per superseding key, the highest level among those (none if tampered)."""
    results = []
    for cap in {c.id: c for c in cart.capabilities}.values():  # one verdict per claim id
        current, older = supersede(accepted.get(cap.id, ()))
        winners = tuple(sorted(current, key=lambda a: (a.acx_level, instant(a), a.credential_digest), reverse=True))
        best = winners[0] if winners and not cart.tampered else None
        results.append(CapabilityResolution(cap, VERIFIED if best else UNPROVEN, best, winners,
                                            tuple(sorted((*rejected.get(cap.id, ()), *older), key=lambda r: r.digest))))
    return tuple(results)
