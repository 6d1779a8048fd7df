"""The attempt record: a verifier's signed word that a cartridge was attempted, whatever the verdict (pure).

Trying until lucky only pays while failed attempts are invisible. So every run that played leaves a
public trace: an issued run's credential carries ``acx:attempt`` (its place in the history of its
(cartridge id, benchmark, capability) with this verifier), and a NOT ISSUED run is pushed as an
*attempt record* referrer of the cartridge (artifact type ``application/vnd.acx.attempt-record.v1``),
signed like a credential (Data Integrity ``eddsa-jcs-2022``). It names the verdict, reason codes and,
when games were played, the rating - never held-out content (no task, no transcript).
"""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from acx_oci.crypto import Identity, canonical, check_digest, dataintegrity
from acx_oci.errors import SchemaError, UsageError
from acx_oci.jsonio import first_error
from acx_oci.model.statuslist import rfc3339
from acx_oci.timeutil import parse_datetime

ATTEMPT_RECORD_TYPE = "AcxAttemptRecord"
ATTEMPT_CONTEXT = "https://acx.dev/ns/attempt/v1"
VERDICT_ISSUED, VERDICT_NOT_ISSUED = "issued", "not-issued"
SCOPE_ROM, SCOPE_ROM_CLAIM = "rom", "rom+claim"  # acx:cooldownScope: the ROM alone, or also the claim
SCOPE_PUBLISHER = "publisher"  # also every cartridge id of the ROM's signing key on this capability and benchmark
COOLDOWN_SCOPES = (SCOPE_ROM_CLAIM, SCOPE_ROM, SCOPE_PUBLISHER)
SCHEMA = "attempt-record.schema.json"
_ATTEMPT_ID = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class AttemptCount:
    """Where an attempt stands in its (cartridge id, benchmark, capability) history with one verifier."""

    sequence: int  # 1 for the first attempt
    previous_attempts: int  # attempts that played before this one (sequence - 1 unless history was pruned)
    first_attempt_at: datetime
    # A random 128-bit id (32 hex digits): sequences collide across two state directories of one key, this does not.
    attempt_id: str | None = None
    publisher: str | None = None  # did:key of the key that signed the ROM
    # the same count across every cartridge id of that publisher key on this capability and benchmark
    publisher_sequence: int | None = None
    publisher_first_attempt_at: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``acx:attempt`` / ``attempt`` object."""
        doc: dict[str, Any] = {"sequence": self.sequence, "previousAttempts": self.previous_attempts,
                               "firstAttemptAt": rfc3339(self.first_attempt_at)}
        if self.attempt_id:
            doc["attemptId"] = self.attempt_id
        if self.publisher and self.publisher_sequence and self.publisher_first_attempt_at:
            doc.update(publisher=self.publisher, publisherSequence=self.publisher_sequence,
                       publisherFirstAttemptAt=rfc3339(self.publisher_first_attempt_at))
        return doc

    @staticmethod
    def from_json(doc: Any) -> AttemptCount | None:
        """The count an ``acx:attempt`` object says, or None when it is absent or malformed."""
        if not isinstance(doc, dict):
            return None
        seq, prev, first = doc.get("sequence"), doc.get("previousAttempts"), doc.get("firstAttemptAt")
        when = parse_datetime(first) if isinstance(first, str) else None
        if type(seq) is not int or type(prev) is not int or seq < 1 or prev < 0 or when is None:
            return None
        uid = doc.get("attemptId")
        uid = uid if isinstance(uid, str) and _ATTEMPT_ID.fullmatch(uid) else None
        pub, pseq, pfirst = doc.get("publisher"), doc.get("publisherSequence"), doc.get("publisherFirstAttemptAt")
        pwhen = parse_datetime(pfirst) if isinstance(pfirst, str) else None
        if not isinstance(pub, str) or type(pseq) is not int or pseq < 1 or pwhen is None:
            pub, pseq, pwhen = None, None, None
        return AttemptCount(seq, prev, when, uid, pub, pseq, pwhen)


def new_attempt_id() -> str:
    """A fresh random 128-bit attempt id (32 lowercase hex digits)."""
    return secrets.token_hex(16)


@dataclass(frozen=True)
class AttemptRecord:
    """Everything an attempt record says, as one typed value."""

    issuer: str
    valid_from: datetime  # the attempt's finish time
    cartridge_id: str
    rom_digest: str
    cartridge_manifest_digest: str
    benchmark: str  # id@version
    benchmark_digest: str
    capability: str
    attempt: AttemptCount
    verdict: str  # VERDICT_ISSUED | VERDICT_NOT_ISSUED
    reasons: tuple[tuple[str, str], ...] = ()  # (code, text)
    mu: float | None = None  # the rating fields: only when games were played
    sigma: float | None = None
    acx_level: int | None = None
    games_played: int | None = None
    credential_digest: str | None = None  # issued attempts: the credential's sha256
    record_id: str | None = None

    @property
    def played(self) -> bool:
        """Games were played and rated."""
        return self.mu is not None


def build_attempt_record(rec: AttemptRecord) -> dict[str, Any]:
    """The unsigned document; raises UsageError for a value no verifier should sign."""
    for value, what in ((rec.rom_digest, "ROM digest"), (rec.cartridge_manifest_digest, "manifest digest"),
                        (rec.benchmark_digest, "benchmark digest")):
        check_digest(value, what)
    if rec.verdict not in (VERDICT_ISSUED, VERDICT_NOT_ISSUED):
        raise UsageError(f"attempt record: verdict must be issued or not-issued, found {rec.verdict!r}")
    if rec.verdict == VERDICT_ISSUED and not rec.credential_digest:
        raise UsageError("attempt record: an issued attempt names its credential digest")
    doc: dict[str, Any] = {
        "@context": ["https://www.w3.org/ns/credentials/v2", ATTEMPT_CONTEXT],
        "id": rec.record_id or f"urn:uuid:{uuid.uuid4()}",
        "type": ATTEMPT_RECORD_TYPE,
        "issuer": rec.issuer,
        "validFrom": rfc3339(rec.valid_from),
        "cartridgeId": rec.cartridge_id,
        "romDigest": rec.rom_digest,
        "cartridgeManifestDigest": rec.cartridge_manifest_digest,
        "benchmark": rec.benchmark,
        "benchmarkDigest": rec.benchmark_digest,
        "capability": rec.capability,
        "attempt": rec.attempt.to_json(),
        "verdict": rec.verdict,
        "reasons": [{"code": code, "text": text} for code, text in rec.reasons],
    }
    if rec.played:
        doc.update(mu=float(rec.mu or 0.0), sigma=float(rec.sigma or 0.0), acxLevel=int(rec.acx_level or 0),
                   gamesPlayed=int(rec.games_played or 0))
    if rec.credential_digest:
        check_digest(rec.credential_digest, "credential digest")
        doc["credentialDigest"] = rec.credential_digest
    return doc


def sign_attempt_record(rec: AttemptRecord, signer: Identity, verification_method: str | None = None) -> dict[str, Any]:
    """Build and sign (``eddsa-jcs-2022``, created = ``validFrom``)."""
    return dataintegrity.sign(build_attempt_record(rec), signer, verification_method or signer.verification_method,
                              rfc3339(rec.valid_from))


def record_bytes(signed: dict[str, Any]) -> bytes:
    """The bytes the record is pushed as (RFC 8785: the same record always makes the same blob)."""
    return canonical(signed)


def parse_attempt_record(doc: Any) -> AttemptRecord:
    """The typed value of a document that matches the schema; SchemaError otherwise. Proofs are not checked here."""
    error = first_error(doc, SCHEMA)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise SchemaError(f"attempt record: invalid at {where}: {error.message[:200]}")
    count = AttemptCount.from_json(doc["attempt"])
    valid_from = parse_datetime(doc["validFrom"])
    if count is None or valid_from is None:
        raise SchemaError("attempt record: attempt or validFrom is not well-formed")
    return AttemptRecord(
        issuer=doc["issuer"], valid_from=valid_from, cartridge_id=doc["cartridgeId"], rom_digest=doc["romDigest"],
        cartridge_manifest_digest=doc["cartridgeManifestDigest"], benchmark=doc["benchmark"],
        benchmark_digest=doc["benchmarkDigest"], capability=doc["capability"], attempt=count,
        verdict=doc["verdict"], reasons=tuple((r["code"], r["text"]) for r in doc["reasons"]),
        mu=doc.get("mu"), sigma=doc.get("sigma"), acx_level=doc.get("acxLevel"), games_played=doc.get("gamesPlayed"),
        credential_digest=doc.get("credentialDigest"), record_id=doc.get("id"))


def verify_attempt_record(doc: dict[str, Any], resolve_key: dataintegrity.KeyResolver,
                          now: datetime | None = None) -> list[dataintegrity.ProofResult]:
    """Its proofs (all must be ok); the signer must also be the record's ``issuer`` - the caller's key lookup."""
    return dataintegrity.verify(doc, resolve_key, now=now)


def reason_pairs(texts: Sequence[str], default_code: str) -> tuple[tuple[str, str], ...]:
    """(code, text) for reason texts: a text starting ``code:`` with a known code keeps it, else ``default_code``."""
    from acx_oci.reasons import REASONS

    out = []
    for text in texts:
        head = text.split(":", 1)[0].strip()
        out.append((head if head in REASONS else default_code, text))
    return tuple(out)
