"""What resolving a cartridge's claims produces (pure data, no I/O).

``resolve.resolve_cartridge`` fills these from the registry; ``policy`` and the
gateway read them. A claim is ``VERIFIED`` only when a credential that passed
every check names it; everything else is ``unproven``, with the reason codes
of every attestation that was rejected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from acx_oci.model.capability import CapabilityRecord
from acx_oci.model.level_credential import LevelCredential, level_credential
from acx_oci.model.level_view import supersede_key
from acx_oci.model.rom import STATUS_TAMPERED

VERIFIED = "VERIFIED"
UNPROVEN = "unproven"


@dataclass(frozen=True)
class Rejection:
    """An attestation that did not count, and why (stable reason codes)."""

    digest: str  # attestation manifest digest
    codes: tuple[str, ...]
    messages: tuple[str, ...] = ()
    credential_digest: str | None = None
    issuer: str | None = None


@dataclass(frozen=True)
class AcceptedCredential:
    """A credential that passed every check, with the fields policies look at."""

    attestation_digest: str
    credential_digest: str
    issuer: str
    capability_id: str
    benchmark_id: str
    benchmark_version: str
    mu: float
    sigma: float
    games: int
    acx_level: int
    career_tier: str
    valid_from: str  # RFC 3339 as issued
    credential: LevelCredential = field(repr=False, default_factory=LevelCredential.empty)
    solver: str = "reference"  # what played: "rom" (the signed ROM, sandboxed) or "reference" (a simulation)
    rom_digest: str = ""
    benchmark_digest: str = ""
    # the public keys of the proofs' verification methods: one key under two DIDs is one verifier (quorum)
    proof_keys: frozenset[bytes] = field(repr=False, default_factory=frozenset)
    # the checks that passed only because the trust file relaxed a default (issue 34): one line each
    relaxed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        level_credential(self.credential, f"accepted credential {self.credential_digest}")

    @property
    def supersede_key(self) -> tuple[str, str, str, str]:
        """(issuer DID, ROM digest, benchmark digest, capability id): within one key only the newest decides."""
        return supersede_key(self.issuer, self.rom_digest, self.benchmark_digest, self.capability_id)

    @property
    def model(self) -> dict[str, Any] | None:
        """``{id, api, dataUse}`` of the model the agent called, from the verified credential; None if none."""
        res = self.credential.result
        m = res.get("acx:model")
        if not isinstance(m, dict):
            return None
        return {"id": m.get("id"), "api": m.get("api"), "dataUse": res.get("acx:modelDataUse", "unknown")}


@dataclass(frozen=True)
class AttemptEntry:
    """One attempt resolve could see and verify: an issued credential or a signed attempt record."""

    issuer: str
    at: str  # validFrom: when the attempt finished (RFC 3339 as signed)
    verdict: str  # issued | not-issued
    source: str  # "credential" | "attempt-record"
    digest: str  # the credential's or the attempt record's digest
    benchmark_digest: str
    sequence: int | None = None  # the verifier's own counter (acx:attempt / attempt.sequence)
    first_attempt_at: str | None = None
    acx_level: int | None = None
    reasons: tuple[str, ...] = ()  # reason codes of a not-issued attempt
    instant: datetime | None = field(default=None, compare=False)
    first_attempt: datetime | None = field(default=None, compare=False)
    attempt_id: str | None = None  # the verifier's random 128-bit attempt id (None: issued before it was signed)
    publisher: str | None = None  # did:key of the ROM's signing key, as the verifier signed it
    publisher_sequence: int | None = None  # the verifier's count across the publisher's cartridge ids
    publisher_first_attempt: datetime | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        """One ``attempts.entries[]`` item of ``resolve --json``."""
        return {"issuer": self.issuer, "at": self.at, "verdict": self.verdict, "source": self.source,
                "digest": self.digest, "benchmarkDigest": self.benchmark_digest, "sequence": self.sequence,
                "firstAttemptAt": self.first_attempt_at, "acxLevel": self.acx_level, "reasons": list(self.reasons),
                "attemptId": self.attempt_id, "publisher": self.publisher,
                "publisherSequence": self.publisher_sequence}


@dataclass(frozen=True)
class AttemptHistory:
    """Every attempt at one claim resolve could verify, oldest first; the verifiers' counters may know more."""

    entries: tuple[AttemptEntry, ...] = ()

    def groups(self) -> dict[tuple[str, str], list[AttemptEntry]]:
        """The entries per (verifier, benchmark digest): the scope of one verifier's attempt counter."""
        out: dict[tuple[str, str], list[AttemptEntry]] = {}
        for e in self.entries:
            out.setdefault((e.issuer, e.benchmark_digest), []).append(e)
        return out

    @property
    def total(self) -> int:
        """Attempts known: per verifier and benchmark, the entries seen or its own counter, whichever is more."""
        return sum(max(len(g), max((e.sequence or 0 for e in g), default=0)) for g in self.groups().values())

    @property
    def issued(self) -> int:
        """Issued attempts seen."""
        return sum(1 for e in self.entries if e.verdict == "issued")

    @property
    def not_issued(self) -> int:
        """Attempts known not to have issued (counted, seen or not)."""
        return self.total - self.issued

    def lines(self) -> list[str]:
        """``3 attempts by did:...: 1 issued, 2 not issued``, one per verifier."""
        by: dict[str, AttemptHistory] = {}
        for e in self.entries:
            by.setdefault(e.issuer, AttemptHistory())
            by[e.issuer] = AttemptHistory((*by[e.issuer].entries, e))
        return [f"{h.total} attempt{'s' if h.total != 1 else ''} by {who}: {h.issued} issued, "
                f"{h.not_issued} not issued{h.publisher_line()}" for who, h in by.items()]

    def publisher_line(self) -> str:
        """``; best of 4 attempts by this publisher in 1 d`` from the verifier's signed publisher-wide counter
        (every cartridge id of the ROM's signing key on this capability and benchmark); empty without one."""
        best = max((e for e in self.entries if e.publisher_sequence and e.publisher_first_attempt and e.instant),
                   key=lambda e: (e.publisher_sequence or 0, e.instant), default=None)
        if best is None or best.instant is None or best.publisher_first_attempt is None:
            return ""
        days = max(1, math.ceil((best.instant - best.publisher_first_attempt).total_seconds() / 86400))
        n = best.publisher_sequence
        return f"; best of {n} attempt{'s' if n != 1 else ''} by this publisher in {days} d"

    def to_json(self) -> dict[str, Any]:
        """``attempts`` of one capability in ``resolve --json``."""
        return {"total": self.total, "issued": self.issued, "notIssued": self.not_issued,
                "entries": [e.to_json() for e in self.entries]}


@dataclass(frozen=True)
class CapabilityResolution:
    """One claimed capability: the credentials accepted and rejected for it, and the one it rests on."""
    capability: CapabilityRecord
    effective: str  # VERIFIED | unproven
    best: AcceptedCredential | None  # the credential the effective proficiency rests on
    accepted: tuple[AcceptedCredential, ...]  # the newest valid one per (issuer, ROM, benchmark, capability)
    rejected: tuple[Rejection, ...]  # failed a check, failed replay, or superseded
    attempts: AttemptHistory = AttemptHistory()

    def to_json(self) -> dict[str, Any]:
        """The JSON form; the rating fields are None when no credential backs the capability."""
        b = self.best
        return {
            "id": self.capability.id,
            "display": self.capability.display(),
            "taskType": self.capability.task_type,
            "stack": list(self.capability.stack),
            "domain": self.capability.domain,
            "effective": self.effective,
            "careerTier": b.career_tier if b else None,
            "acxLevel": b.acx_level if b else None,
            "mu": b.mu if b else None,
            "sigma": b.sigma if b else None,
            "games": b.games if b else None,
            "solver": b.solver if b else None,
            "simulated": b.solver != "rom" if b else False,  # SIMULATED on screen; effective stays VERIFIED
            "relaxed": list(b.relaxed) if b else [],
            "model": b.model if b else None,
            "issuer": b.issuer if b else None,
            "benchmark": f"{b.benchmark_id}@{b.benchmark_version}" if b else None,
            "credentialDigest": b.credential_digest if b else None,
            "attestationDigest": b.attestation_digest if b else None,
            "validFrom": b.valid_from if b else None,
            "rejected": [{"digest": r.digest, "codes": list(r.codes), "messages": list(r.messages),
                          "credentialDigest": r.credential_digest, "issuer": r.issuer} for r in self.rejected],
            "attempts": self.attempts.to_json(),
        }


@dataclass(frozen=True)
class Resolution:
    """The resolved state of one cartridge manifest."""

    reference: str
    manifest_digest: str
    rom_digest: str
    signature_status: str  # valid | warning | tampered | unsigned
    signer: str | None
    controller: str
    capabilities: tuple[CapabilityResolution, ...]
    unmatched: tuple[Rejection, ...]  # valid-or-not attestations naming no claimed capability
    referrers_seen: int
    partial: bool  # a bound (count, bytes, time) was hit: the answer may be incomplete
    notes: tuple[str, ...] = ()
    # Whether the deciding credentials were re-derived from their game records (off: --no-replay, weaker).
    replayed: bool = True
    # Referrers the store's listing did not type (skopeo copies, go-containerregistry), typed by their manifests.
    classified_by_manifest: int = 0
    # Every attestation digest fetched and judged, accepted or not (what was never judged is in none of the lists).
    judged: frozenset[str] = frozenset()
    # Where the time went, per phase (fetch, parse, verify, replay, status): seconds and counts.
    phases: Mapping[str, Mapping[str, float | int]] | None = None
    # How many credentials were put through every verification rule (superseded ones are not).
    verifications: int = 0

    def verified_attestations(self) -> frozenset[str]:
        """The attestation digests this resolution judged VERIFIED: those a VERIFIED claim rests on.

        An allow-list for whatever must carry only verified attestations (``copy --only-verified``): an
        attestation missing from every list here, because a listing mistyped it or it refers to something
        else, was never judged, and absent from this set it is not taken for verified.
        """
        if self.signature_status == STATUS_TAMPERED:
            return frozenset()
        return frozenset(a.attestation_digest for c in self.capabilities if c.effective == VERIFIED
                         for a in c.accepted)

    def to_json(self) -> dict[str, Any]:
        """The JSON form that ``resolve --json`` prints and the gateway serves."""
        return {
            "reference": self.reference,
            "replayed": self.replayed,
            "manifestDigest": self.manifest_digest,
            "romDigest": self.rom_digest,
            "signature": {"status": self.signature_status, "signer": self.signer},
            "controller": self.controller,
            "capabilities": [c.to_json() for c in self.capabilities],
            "unmatched": [{"digest": r.digest, "codes": list(r.codes), "messages": list(r.messages)}
                          for r in self.unmatched],
            "referrersSeen": self.referrers_seen,
            "classifiedByManifest": self.classified_by_manifest,
            "partial": self.partial,
            "notes": list(self.notes),
            **({"phases": {k: dict(v) for k, v in self.phases.items()}, "verifications": self.verifications}
               if self.phases is not None else {}),
        }
