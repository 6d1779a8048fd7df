"""Is this credential in its verifier's log, and is that log the one history this consumer has seen? Pure.

The trust file pins a verifier's log (:class:`~acx_oci.trust.trustfile.LogTrust`). A credential of
such a verifier counts only when its attestation carries a log proof (:mod:`acx_oci.tlog.proof`)
whose entry describes *this* credential, whose inclusion path leads to a checkpoint signed by the
log key and cosigned by the quorum of witnesses, and whose checkpoint, like the newest one this
consumer remembers, is a prefix of what the log serves now (consistency proofs computed by
:mod:`acx_oci.services.consumer.log_fetch` from the log's tiles and checked here). A fork (same size, other
root), a shrink or a rewind is ``log_inconsistent``; a missing or wrong proof is ``not_logged``;
signatures or quorum short are ``note_unverified``. :func:`log_superseded` then decides superseding
by the log's order, so a newer credential deleted from the cartridge's repository still counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from acx_oci import reasons
from acx_oci.errors import AcxError, LogInconsistent, NoteInvalid, UsageError
from acx_oci.model import (
    AcceptedCredential,
    AttemptEntry,
    AttemptHistory,
    CapabilityResolution,
    Rejection,
    issuer_id,
    level_result,
    level_view,
)
from acx_oci.timeutil import parse_datetime
from acx_oci.tlog import (
    Checkpoint,
    Cosigner,
    LogProof,
    Verifier,
    check_proof,
    cosigner_from_vkey,
    open_checkpoint,
    parse_proof,
    verifier_from_vkey,
    verify_consistency,
    verify_cosigned,
)
from acx_oci.trust import LogTrust, Trust
from acx_oci.urls import without_fragment

FLOOR = datetime.min.replace(tzinfo=UTC)
CARTRIDGE_URN = "urn:acx:cartridge:"
NO_LOG_NOTE = ("log checking is off (--no-log): credentials were NOT checked against their verifiers' transparency "
               "logs; a credential issued quietly, backdated or shown to this consumer only would count (weaker)")


@dataclass(frozen=True)
class LogKeys:
    """A :class:`LogTrust` with its keys parsed (key IDs checked): what the checks verify against."""

    origin: str
    url: str
    verifier: Verifier
    witnesses: tuple[Cosigner, ...]
    quorum: int


def log_keys(log: LogTrust, who: str = "trust file") -> LogKeys:
    """Parse the pinned keys; a key that is not a valid vkey of the right type is one line, exit 2."""
    try:
        verifier = verifier_from_vkey(log.key)
        witnesses = tuple(cosigner_from_vkey(k) for k in log.witness_keys)
    except NoteInvalid as exc:
        raise UsageError(f"{who}: log of {log.origin}: {exc}") from None
    if verifier.name != log.origin:
        raise UsageError(f"{who}: log key name {verifier.name!r} is not the origin {log.origin!r}")
    return LogKeys(log.origin, log.url, verifier, witnesses, log.quorum)


def pinned_keys(trust: Trust) -> dict[str, LogKeys]:
    """Every log the trust file pins, parsed: a bad key fails here, before anything is fetched."""
    return {k.origin: k for k in (log_keys(p.log, trust.source or "trust file") for p in trust.verifiers
                                  if p.log is not None)}


@dataclass(frozen=True)
class LogView:
    """What was fetched of one log for one resolution (by :mod:`acx_oci.services.consumer.log_fetch`).

    ``consistency`` maps (old size, head size) to the proof hashes computed from the head's tiles;
    ``entries`` are verified (index, entry) pairs from ``entries_from`` to the head's size.
    """

    head: bytes | None = None  # the served checkpoint note, cosignatures included
    remembered: bytes | None = None  # the newest checkpoint this consumer saw of this origin
    consistency: Mapping[tuple[int, int], tuple[bytes, ...]] = field(default_factory=dict)
    error: str | None = None  # why the head (or its tiles) could not be read
    entries: tuple[tuple[int, dict[str, Any]], ...] = ()
    entries_from: int | None = None  # None: the history was not read (or not to its end)
    # head_status results per (pinned keys, now): one resolution judges many credentials against one head
    memo: dict[tuple[LogKeys, int | None], tuple[Checkpoint | None, LogVerdict]] = field(
        default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class LogVerdict:
    """ok (``code`` None) or the reason code and one sentence; the proof's index when it was found."""

    code: str | None
    message: str = ""
    index: int | None = None
    entry: dict[str, Any] | None = None


_LOG_CODES = frozenset({reasons.NOT_LOGGED, reasons.LOG_INCONSISTENT, reasons.NOTE_UNVERIFIED, reasons.LOG_INVALID})


def _code(exc: AcxError, otherwise: str) -> str:
    """The log code an error carries; a malformed note or document (``note_invalid``, ...) is ``otherwise``."""
    return exc.code if exc.code in _LOG_CODES else otherwise


def _consistent(old: Checkpoint, new: Checkpoint, view: LogView, what: str) -> None:
    """Raise :class:`LogInconsistent` unless ``new`` (the head) extends ``old``."""
    if old.size > new.size:
        raise LogInconsistent(f"the log shrank: it serves size {new.size}, {what} has size {old.size}")
    if old.size == new.size and old.root != new.root:
        raise LogInconsistent(f"the log forked: two different roots for size {old.size} ({what} and the served head)")
    if old.size in (0, new.size):
        return
    proof = view.consistency.get((old.size, new.size))
    if proof is None:
        raise LogInconsistent(f"no consistency proof from {what} (size {old.size}) to the head (size {new.size})")
    verify_consistency(old.size, new.size, old.root, new.root, proof)


def head_status(keys: LogKeys, view: LogView, now: int | None = None) -> tuple[Checkpoint | None, LogVerdict]:
    """The served head, verified (log key, witness quorum) and consistent with the remembered checkpoint."""
    key = (keys, now)
    if key not in view.memo:
        view.memo[key] = _head_status(keys, view, now)
    return view.memo[key]


def _head_status(keys: LogKeys, view: LogView, now: int | None) -> tuple[Checkpoint | None, LogVerdict]:
    if view.head is None:
        return None, LogVerdict(reasons.LOG_INVALID, f"the log at {keys.url} could not be read: {view.error}")
    try:
        head = verify_cosigned(view.head, keys.verifier, keys.witnesses, keys.quorum, origin=keys.origin,
                               now=now).checkpoint
        if view.remembered is not None:
            _consistent(open_checkpoint(view.remembered, keys.verifier, keys.origin), head, view,
                        "the checkpoint this consumer saw before")
    except AcxError as exc:
        return None, LogVerdict(_code(exc, reasons.LOG_INVALID), f"the log's head at {keys.url}: {exc}")
    return head, LogVerdict(None)


def entry_mismatch(entry: Mapping[str, Any], credential: Mapping[str, Any], credential_digest: str) -> list[str]:
    """The fields in which the logged entry does not describe the credential (the producers' contract)."""
    res = level_result(dict(credential)) or {}
    subject = credential.get("credentialSubject")
    sid = subject.get("id") if isinstance(subject, dict) else None
    sid = sid if isinstance(sid, str) else None  # (any shape: the schema is checked with the other rules)
    cart = sid[len(CARTRIDGE_URN):] if isinstance(sid, str) and sid.startswith(CARTRIDGE_URN) else sid
    carts = {sid, cart, cart.rsplit("@", 1)[0]} if isinstance(cart, str) else {sid}
    want = {"kind": "attempt", "verdict": "issued", "recordDigest": credential_digest,
            "romDigest": res.get("acx:cartridgeRomDigest"), "benchmarkDigest": res.get("acx:benchmarkDigest"),
            "capability": res.get("acx:capabilityId"), "issuer": issuer_id(credential)}
    bad = [k for k, v in want.items() if entry.get(k) != v]
    if entry.get("cartridgeId") not in carts:
        bad.append("cartridgeId")
    return bad


def check_logged(proof_bytes: bytes | None, credential: Mapping[str, Any], credential_digest: str, keys: LogKeys,
                 view: LogView, now: int | None = None) -> LogVerdict:
    """The whole check for one credential of a log-pinned verifier (see the module docstring)."""
    if proof_bytes is None:
        return LogVerdict(reasons.NOT_LOGGED, f"the attestation carries no log proof (its verifier's log is "
                                              f"{keys.origin})")
    head, status = head_status(keys, view, now)
    try:
        proof: LogProof = parse_proof(proof_bytes)
        if proof.origin != keys.origin:
            return LogVerdict(reasons.NOT_LOGGED, f"the proof is for log {proof.origin[:120]!r}, not {keys.origin}")
        checkpoint = check_proof(proof, keys.verifier, keys.witnesses, keys.quorum, now=now).checkpoint
    except AcxError as exc:
        return LogVerdict(_code(exc, reasons.NOT_LOGGED), f"log proof: {exc}")
    bad = entry_mismatch(proof.entry, credential, credential_digest)
    if bad:
        return LogVerdict(reasons.NOT_LOGGED, f"the logged entry {proof.index} does not describe this credential "
                                              f"({', '.join(bad)} differ)", proof.index)
    if head is None:
        return LogVerdict(status.code, status.message, proof.index)
    try:
        _consistent(checkpoint, head, view, "the proof's checkpoint")
    except AcxError as exc:
        return LogVerdict(exc.code, f"log proof: {exc}", proof.index)
    return LogVerdict(None, "", proof.index, proof.entry)


def log_failure(trust: Trust, pinned_logs: Mapping[str, LogKeys], views: Mapping[str, LogView],
                credential: Mapping[str, Any] | None, credential_digest: str | None, proof_bytes: bytes | None,
                now: int | None) -> LogVerdict | None:
    """The failed log check of one fetched credential; None when it passes or its verifier is not log-pinned.
    ``pinned_logs``: :func:`pinned_keys` of the trust file, parsed once at the door (a log missing there was
    never fetched: the check fails closed)."""
    issuer = issuer_id(credential) if credential is not None else None
    pinned = trust.log_for(issuer) if issuer else None
    if pinned is None or credential is None or credential_digest is None:
        return None
    keys = pinned_logs.get(pinned.origin)
    if keys is None:
        return LogVerdict(reasons.NOT_LOGGED, f"the log {pinned.origin} of {issuer} was not fetched")
    view = views.get(keys.origin, LogView(error="it was not fetched"))
    verdict = check_logged(proof_bytes, credential, credential_digest, keys, view, now)
    return None if verdict.code is None else verdict


def log_positions(proofs: Mapping[str, bytes | None]) -> dict[str, tuple[str, int]]:
    """Attestation digest → (origin, index) of its log proof (parsed only: call it on credentials that passed)."""
    out: dict[str, tuple[str, int]] = {}
    for digest, data in proofs.items():
        if data is None:
            continue
        try:
            proof = parse_proof(data)
        except AcxError:
            continue
        out[digest] = (proof.origin, proof.index)
    return out


def supersede_key(entry: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """An attempt entry's superseding key, as :attr:`AcceptedCredential.supersede_key` draws it."""
    return level_view.supersede_key(str(entry.get("issuer", "")), str(entry.get("romDigest", "")),
                                    str(entry.get("benchmarkDigest", "")), str(entry.get("capability", "")))


def log_superseded(accepted: Sequence[AcceptedCredential], positions: Mapping[str, tuple[str, int]],
                   views: Mapping[str, LogView]) -> tuple[tuple[AcceptedCredential, ...], tuple[Rejection, ...]]:
    """Split ``accepted`` into kept and ``superseded`` by the log: a later *issued* entry of the same key wins.

    ``positions`` maps an attestation digest to (log origin, entry index) of its verified proof. The
    newer credential need not be in the registry any more: the log remembers it was issued.
    """
    kept: list[AcceptedCredential] = []
    gone: list[Rejection] = []
    for acc in accepted:
        pos = positions.get(acc.attestation_digest)
        view = views.get(pos[0]) if pos else None
        later = None
        if pos is not None and view is not None:
            later = next((i for i, e in view.entries if i > pos[1] and e.get("kind") == "attempt"
                          and e.get("verdict") == "issued" and supersede_key(e) == acc.supersede_key), None)
        if later is None:
            kept.append(acc)
            continue
        assert pos is not None
        gone.append(Rejection(acc.attestation_digest, (reasons.SUPERSEDED,),
                              (f"superseded: the log {pos[0]} holds a later issued attempt of the same issuer, ROM, "
                               f"benchmark and capability (entry {later}, this credential's is {pos[1]})",),
                              acc.credential_digest, acc.issuer))
    return tuple(kept), tuple(gone)


def _log_entry(e: Mapping[str, Any]) -> AttemptEntry:
    level = e.get("level")
    return AttemptEntry(issuer=str(e.get("issuer", "")), at=str(e.get("time", "")), verdict=str(e.get("verdict")),
                        source="log", digest=str(e.get("recordDigest", "")),
                        benchmark_digest=str(e.get("benchmarkDigest", "")),
                        acx_level=level if isinstance(level, int) else None,
                        reasons=tuple(str(r) for r in e.get("reasons") or ()), instant=parse_datetime(e.get("time")))


def with_log_attempts(caps: tuple[CapabilityResolution, ...], views: Mapping[str, LogView], rom_digest: str,
                      trust: Trust) -> tuple[CapabilityResolution, ...]:
    """Each claim's attempt history with its log-pinned verifiers' attempts taken from their logs.

    For a verifier whose log was read from its first entry, the log *is* its history of this ROM and
    claim: what the publisher deleted from the registry still counts, and the registry's entries of that
    verifier are replaced (an issued one keeps its counter). Other verifiers' entries stay as found.
    """
    complete = {o: v for o, v in views.items() if v.entries_from == 0 and v.head is not None}
    if not complete:
        return caps
    out = []
    for cap in caps:
        logged: list[AttemptEntry] = []
        covered: set[str] = set()
        for origin, view in complete.items():
            for _, e in view.entries:
                issuer = str(e.get("issuer", ""))
                pinned = trust.log_for(issuer)
                if pinned is None or pinned.origin != origin:
                    continue
                covered.add(without_fragment(issuer))
                if e.get("kind") == "attempt" and e.get("romDigest") == rom_digest \
                        and e.get("capability") == cap.capability.id:
                    logged.append(_log_entry(e))
        if not covered:
            out.append(cap)
            continue
        known = {a.digest: a for a in cap.attempts.entries}
        logged = [replace(e, sequence=known[e.digest].sequence) if e.digest in known else e for e in logged]
        kept = [a for a in cap.attempts.entries if without_fragment(a.issuer) not in covered]
        # within one whole second the log's order decides (a deleted newer attempt has no registry counter)
        rank = {id(e): i for i, e in enumerate(logged)}
        merged = sorted([*kept, *logged], key=lambda a: (a.instant is None, a.instant or FLOOR,
                                                         rank.get(id(a), a.sequence or 0), a.digest))
        out.append(replace(cap, attempts=AttemptHistory(tuple(merged))))
    return tuple(out)
