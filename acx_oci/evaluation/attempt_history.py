"""The attempt history resolve can verify (issue 23 item 4): signed attempt records and credentials' counters.

Pure: the records' bytes were fetched beforehand (:mod:`acx_oci.services.consumer.resolve_fetch`). A record counts only
when it is an attempt record by the schema, its proof verifies with a key of its ``issuer``, that issuer is a
verifier the trust file trusts, and it is about *this* cartridge (its manifest and ROM digests) and a claim it
makes: anyone can push a referrer, and a forged record must not be able to push a cartridge over a
``maxAttempts`` bound. Issued attempts are the credentials that verified (also those since revoked, or refused
by a trust-file rule: they were attempts; not the superseded ones the walk did not verify); a record naming one
of them, or carrying the same signed attempt id (records without one: the same verifier's sequence number for
the same benchmark), is the same attempt, counted once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from acx_oci import reasons
from acx_oci.errors import AcxError
from acx_oci.evaluation.checks import check_proofs
from acx_oci.evaluation.did_documents import DidDocuments
from acx_oci.evaluation.judge_input import CartridgeFacts, Material
from acx_oci.model import (
    VERDICT_ISSUED,
    AttemptCount,
    AttemptEntry,
    AttemptHistory,
    CapabilityResolution,
    LevelCredential,
    credential_attempt,
    issuer_id,
    level_result,
    parse_attempt_record,
    rfc3339,
)
from acx_oci.timeutil import parse_datetime
from acx_oci.trust import Trust

# A credential rejected only for these still records an attempt the verifier made (it was issued): its proof was
# verified with the other rules. Not ``superseded``: the walk lists older credentials so without verifying them,
# so an unsigned copy claiming any counter or date would count (inflate a history, or claim the sequence numbers
# of real attempt records to have them dropped as "already counted"). The verified newest credential's own
# ``acx:attempt`` counter still counts every attempt before it (attempts.attempts_in_window).
# Also the trust file's other rules (issue 34 item 2): a verified credential this consumer does not accept for its
# solver, model, benchmark, gate, certification, contamination or status freshness was still an attempt, so the
# count does not change with them. Never a proof, issuer, binding or evidence code: those say nothing verified.
ATTEMPT_STILL_COUNTS = frozenset({
    reasons.REVOKED, reasons.SUSPENDED, reasons.EXPIRED, reasons.STATUS_UNKNOWN, reasons.STATUS_STALE,
    reasons.STATUS_ROLLBACK, reasons.SOLVER_NOT_ACCEPTED, reasons.MODEL_NOT_ACCEPTED, reasons.BENCHMARK_NOT_ACCEPTED,
    reasons.HELD_OUT_MISMATCH, reasons.EXAM_UNCERTIFIED, reasons.CONTAMINATION_UNPROVEN, reasons.SIGMA_GATE,
    reasons.GAMES_GATE})


@dataclass(frozen=True)
class FetchedRecord:
    """One attempt-record referrer as fetched: its manifest digest and its parsed JSON (None: unusable)."""

    digest: str
    document: Any = None


def record_entry(item: FetchedRecord, cart: CartridgeFacts, trust: Trust, now: datetime,
                 documents: DidDocuments) -> tuple[str, AttemptEntry, str | None] | None:
    """(capability id, entry, the credential it names) for a record that verifies and is about this cartridge.

    None for any other record: unreadable, untrusted, forged, or about another cartridge.
    """
    doc = item.document
    try:
        rec = parse_attempt_record(doc)
    except AcxError:
        return None
    if not trust.is_trusted_verifier(rec.issuer) or rec.cartridge_manifest_digest != cart.manifest_digest \
            or rec.rom_digest != cart.rom_digest:
        return None
    if not all(c.ok for c in check_proofs(doc, documents.keys, now, name="attempt_record", issuer=rec.issuer)):
        return None
    return rec.capability, AttemptEntry(
        issuer=rec.issuer, at=rfc3339(rec.valid_from), verdict=rec.verdict, source="attempt-record",
        digest=item.digest, benchmark_digest=rec.benchmark_digest, sequence=rec.attempt.sequence,
        first_attempt_at=rfc3339(rec.attempt.first_attempt_at), acx_level=rec.acx_level,
        reasons=tuple(code for code, _ in rec.reasons), instant=rec.valid_from,
        first_attempt=rec.attempt.first_attempt_at, **_ids(rec.attempt)), rec.credential_digest


def _ids(count: AttemptCount | None) -> dict[str, Any]:
    """The attempt id and the publisher-wide count an ``attempt`` object signs (empty when it has none)."""
    if count is None:
        return {}
    return {"attempt_id": count.attempt_id, "publisher": count.publisher,
            "publisher_sequence": count.publisher_sequence, "publisher_first_attempt": count.publisher_first_attempt_at}


def credential_entry(cred: LevelCredential, digest: str) -> AttemptEntry:
    """The issued attempt a verified credential records (its ``acx:attempt`` counter when it has one)."""
    res = level_result(cred) or {}
    count = credential_attempt(cred)
    when = parse_datetime(cred.get("validFrom"))
    return AttemptEntry(
        issuer=str(issuer_id(cred) or ""), at=str(cred.get("validFrom", "")), verdict=VERDICT_ISSUED,
        source="credential", digest=digest, benchmark_digest=str(res.get("acx:benchmarkDigest", "")),
        sequence=count.sequence if count else None,
        first_attempt_at=rfc3339(count.first_attempt_at) if count else None,
        acx_level=res.get("acx:acxLevel") if isinstance(res.get("acx:acxLevel"), int) else None,
        instant=when, first_attempt=count.first_attempt_at if count else None, **_ids(count))


def _issued(cap: CapabilityResolution, credentials: Mapping[str, LevelCredential]) -> dict[str, AttemptEntry]:
    """Per credential digest, the issued attempt of every credential of this claim that verified."""
    out: dict[str, AttemptEntry] = {}
    for acc in cap.accepted:
        out[acc.credential_digest] = credential_entry(acc.credential, acc.credential_digest)
    for rej in cap.rejected:
        d = rej.credential_digest
        if d and d in credentials and d not in out and set(rej.codes) <= ATTEMPT_STILL_COUNTS:
            out[d] = credential_entry(credentials[d], d)
    return out


def with_attempts(caps: tuple[CapabilityResolution, ...], material: Material, records: tuple[FetchedRecord, ...],
                  cart: CartridgeFacts, trust: Trust, now: datetime,
                  documents: DidDocuments | None = None) -> tuple[CapabilityResolution, ...]:
    """Each claim's resolution with the attempt history that verified, oldest first.

    Keys resolve from ``documents`` (the trust file's and any did:web the caller fetched beforehand), no I/O.
    """
    documents = documents or DidDocuments(trust)
    credentials = {a.credential_digest: a.credential for a in material.attestations
                   if a.credential is not None and a.credential_digest}
    by_cap: dict[str, list[tuple[AttemptEntry, str | None]]] = {}
    seen: set[str] = set()
    for item in records:
        if item.digest in seen:
            continue
        seen.add(item.digest)
        got = record_entry(item, cart, trust, now, documents)
        if got is not None:
            cap_id, entry, cred_digest = got
            by_cap.setdefault(cap_id, []).append((entry, cred_digest))
    out = []
    for cap in caps:
        issued = _issued(cap, credentials)
        entries = list(issued.values())
        # one attempt is one (verifier, attempt id): a record re-signed or naming an issued credential is the
        # attempt already counted. Before attempt ids were signed, (verifier, benchmark, sequence) was the key,
        # and sequences collide across two state directories of one key: it is used only when either lacks an id.
        ids = {(e.issuer, e.attempt_id) for e in entries if e.attempt_id}
        counted: set[tuple[str, str, int | None]] = {
            (e.issuer, e.benchmark_digest, e.sequence) for e in entries if e.sequence is not None and not e.attempt_id}
        for e, d in by_cap.get(cap.capability.id, []):
            key = (e.issuer, e.benchmark_digest, e.sequence)
            if (d and d in issued) or (e.issuer, e.attempt_id) in ids or (not e.attempt_id and key in counted):
                continue
            if e.attempt_id:
                ids.add((e.issuer, e.attempt_id))
            elif e.sequence is not None:
                counted.add(key)
            entries.append(e)
        # times are whole seconds, so back-to-back attempts tie: the verifier's own counter orders them then
        entries.sort(key=lambda e: (e.instant is None, e.instant or now, e.sequence or 0, e.digest))
        out.append(replace(cap, attempts=AttemptHistory(tuple(entries))))
    return tuple(out)
