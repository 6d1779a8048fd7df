"""Policy requirements and what they conclude: small combinator classes, each with one ``evaluate``.

Pure: a requirement reads a :class:`~acx_oci.model.resolution.Resolution`
(credentials that already passed every verification rule) and ``now``, and
says whether it is met and why not, with a stable reason code.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from acx_oci import reasons
from acx_oci.errors import UsageError
from acx_oci.evaluation.attempts import MaxAttempts, attempts_in_window
from acx_oci.evaluation.quorum import quorum
from acx_oci.model import (
    STATUS_TAMPERED,
    STATUS_UNSIGNED,
    STATUS_VALID,
    STATUS_WARNING,
    TIER_FLOOR,
    TIER_NAMES,
    VERIFIED,
    AcceptedCredential,
    CapabilityResolution,
    Resolution,
    level_phrase,
    sig_of,
)
from acx_oci.timeutil import parse_datetime
from acx_oci.urls import without_fragment

API_VERSION = "acx.dev/policy/v1"
TRUSTED_PUBLISHER = "trusted-publisher"

# Requirement-level reason codes (attestation codes come from verification).
CODE_NOT_CLAIMED = reasons.CAPABILITY_NOT_CLAIMED
CODE_NO_ATTESTATION = reasons.NO_ATTESTATION
CODE_TIER_BELOW = reasons.TIER_BELOW
CODE_LEVEL_BELOW = reasons.LEVEL_BELOW
CODE_ISSUER_NOT_ALLOWED = reasons.ISSUER_NOT_ALLOWED
CODE_TOO_OLD = reasons.CREDENTIAL_TOO_OLD
CODE_BENCHMARK_MISMATCH = reasons.BENCHMARK_MISMATCH
CODE_PARTIAL = reasons.RESOLUTION_PARTIAL
CODE_ROM_UNSIGNED = reasons.ROM_UNSIGNED
CODE_ROM_TAMPERED = reasons.ROM_TAMPERED
CODE_PUBLISHER_UNTRUSTED = reasons.PUBLISHER_UNTRUSTED
CODE_PUBLISHER_NOT_ALLOWED = reasons.PUBLISHER_NOT_ALLOWED
CODE_NOT_VERIFIED = reasons.CLAIM_NOT_VERIFIED
CODE_MODEL_MISMATCH = reasons.MODEL_MISMATCH
CODE_QUORUM_UNMET = reasons.QUORUM_UNMET
CODE_TOO_MANY_ATTEMPTS = reasons.TOO_MANY_ATTEMPTS


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Considered:
    """One attestation a requirement looked at, and what it made of it.

    ``outcome``: ``satisfies`` (passed verification and meets this
    requirement), ``insufficient`` (passed verification, misses this
    requirement: ``codes`` say how), ``rejected`` (failed verification:
    ``codes`` are the verifier's), ``unmatched`` (names no claimed capability).
    """

    attestation_digest: str
    credential_digest: str | None
    issuer: str | None
    outcome: str
    codes: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The JSON form used in verdicts, so a denial shows every credential that was weighed."""
        return {"attestationDigest": self.attestation_digest, "credentialDigest": self.credential_digest,
                "issuer": self.issuer, "outcome": self.outcome, "codes": list(self.codes),
                "messages": list(self.messages)}


@dataclass(frozen=True)
class RequirementResult:
    """A requirement, whether it held, and why (``codes`` are empty when it did)."""

    description: str
    met: bool
    reasons: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()
    considered: tuple[Considered, ...] = ()
    children: tuple[RequirementResult, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The JSON form, with ``children`` only when the requirement is a combinator."""
        out: dict[str, Any] = {"description": self.description, "met": self.met, "reasons": list(self.reasons),
                               "codes": list(self.codes),
                               "considered": [c.to_json() for c in self.considered]}
        if self.children:
            out["children"] = [c.to_json() for c in self.children]
        return out


@dataclass(frozen=True)
class Verdict:
    """The answer for one cartridge manifest in one repository."""

    allowed: bool
    repository: str
    manifest_digest: str
    rules: tuple[str, ...]
    requirements: tuple[RequirementResult, ...]
    notes: tuple[str, ...] = ()
    partial: bool = False
    replayed: bool = True  # the deciding credentials were re-derived from their game records

    @property
    def unmet(self) -> list[RequirementResult]:
        """The top-level requirements that did not hold; empty when the verdict allows."""
        return [r for r in self.requirements if not r.met]

    def summary(self) -> str:
        """One line naming every unmet requirement and its codes (for logs and the gateway's 403)."""
        if self.allowed:
            return "allowed" + (f" ({self.notes[0]})" if self.notes and not self.requirements else "")
        parts = [f"{r.description} [{', '.join(r.codes) or 'unmet'}]" for r in self.unmet]
        return "policy not met: " + ("; ".join(parts) or (self.notes[0] if self.notes else "denied"))

    def to_json(self) -> dict[str, Any]:
        """The JSON form that ``policy check`` prints and the gateway returns with a 403."""
        return {
            "allowed": self.allowed,
            "repository": self.repository,
            "manifestDigest": self.manifest_digest,
            "rules": list(self.rules),
            "requirements": [r.to_json() for r in self.requirements],
            "partial": self.partial,
            "replayed": self.replayed,
            "notes": list(self.notes),
        }


# --------------------------------------------------------------------------- requirements


class Requirement(ABC):
    """One thing a cartridge must satisfy; subclasses are small and pure."""

    @abstractmethod
    def describe(self) -> str:
        """A one-line human description, used as the result's ``description`` and in denials."""

    @abstractmethod
    def evaluate(self, resolution: Resolution, now: datetime) -> RequirementResult:
        """Whether the resolution meets this requirement at ``now``; pure: it never touches a registry."""


class SignedBy(Requirement):
    """The ROM signature is intact and by a trusted publisher (or one of the named DIDs).

    ``trusted-publisher`` means the trust file's publishers: the resolution's
    ``valid`` status already says exactly that. A DID list narrows (or, for a
    publisher the trust file does not list, extends) it to those DIDs; the
    signature must still be intact.
    """

    def __init__(self, dids: tuple[str, ...] | None = None) -> None:
        self.dids = dids

    def describe(self) -> str:
        """Names the trusted publishers or the allowed DIDs."""
        if self.dids is None:
            return "ROM signed by a trusted publisher"
        return "ROM signed by one of " + ", ".join(self.dids)

    def evaluate(self, resolution: Resolution, now: datetime) -> RequirementResult:
        """Fails on an unsigned or tampered ROM first, then on a signer outside the trust file or DID list."""
        status, signer = resolution.signature_status, resolution.signer
        if status == STATUS_UNSIGNED:
            return RequirementResult(self.describe(), False, ("the ROM is not signed",), (CODE_ROM_UNSIGNED,))
        if status == STATUS_TAMPERED or status not in (STATUS_VALID, STATUS_WARNING):
            return RequirementResult(self.describe(), False,
                                     (f"the ROM signature or a digest does not hold (status {status})",),
                                     (CODE_ROM_TAMPERED,))
        if self.dids is None:
            if status == STATUS_VALID:
                return RequirementResult(self.describe(), True, (f"signed by trusted publisher {signer}",))
            return RequirementResult(self.describe(), False,
                                     (f"signed by {signer}, who is not a publisher in the trust file",),
                                     (CODE_PUBLISHER_UNTRUSTED,))
        if without_fragment(signer or "") in self.dids:
            return RequirementResult(self.describe(), True, (f"signed by {signer}",))
        return RequirementResult(self.describe(), False, (f"signed by {signer}, not by a DID the policy names",),
                                 (CODE_PUBLISHER_NOT_ALLOWED,))


class CapabilityRequirement(Requirement):
    """A claimed capability with a VERIFIED credential meeting tier/level, issuer, age and benchmark.

    The claim matches on ``taskType``, a stack that *includes* the required
    purls, and ``domain`` when given. Only credentials that already passed
    every verification rule can satisfy it; each one seen is reported with
    the codes that disqualified it.
    """

    def __init__(
        self,
        task_type: str,
        stack: tuple[str, ...] = (),
        domain: str | None = None,
        min_tier: str | None = None,
        min_level: int | None = None,
        issuers: tuple[str, ...] | None = None,
        max_age_seconds: float | None = None,
        max_age_text: str | None = None,
        benchmark_id: str | None = None,
        benchmark_version: str | None = None,
        model: str | None = None,
        min_verifiers: int | None = None,
        max_attempts: MaxAttempts | None = None,
    ) -> None:
        if min_verifiers is not None and min_verifiers < 1:
            raise UsageError(f"minVerifiers {min_verifiers}: expected a whole number of at least 1")
        if min_tier is not None and min_tier not in TIER_FLOOR:
            raise UsageError(f"minTier {min_tier!r}: expected one of {', '.join(TIER_NAMES)}")
        self.task_type = task_type
        self.stack = tuple(sorted(set(stack)))
        self.domain = domain
        self.min_tier = min_tier
        self.min_level = min_level
        self.issuers = issuers
        self.max_age_seconds = max_age_seconds
        self.max_age_text = max_age_text
        self.benchmark_id = benchmark_id
        self.benchmark_version = benchmark_version
        self.model = model  # a level is a level of this ROM *with this model*: only that model's levels count
        self.min_verifiers = min_verifiers  # N distinct verifiers (DIDs and keys); the level is the lowest of N
        self.max_attempts = max_attempts  # resubmitting until lucky: at most COUNT attempts in WINDOW

    def describe(self) -> str:
        """The capability with its stack, domain and tier/level floor (``VERIFIED`` when none)."""
        out = self.task_type
        if self.stack:
            out += "[" + "+".join(self.stack) + "]"
        if self.domain:
            out += "@" + self.domain
        conds = []
        if self.min_tier:
            conds.append(f">={self.min_tier}")
        if self.min_level is not None:
            conds.append(f"level>={self.min_level}")
        if not conds:
            conds.append("VERIFIED")
        out += " " + " ".join(conds)
        if self.issuers:
            out += " issued by " + "|".join(self.issuers)
        if self.max_age_seconds is not None:
            out += f" within {self.max_age_text or f'{int(self.max_age_seconds)}s'}"
        if self.benchmark_id:
            out += f" on {self.benchmark_id}" + (f"@{self.benchmark_version}" if self.benchmark_version else "")
        if self.model:
            out += f" with model {self.model}"
        if self.min_verifiers is not None:
            out += f" by {self.min_verifiers} distinct verifiers"
        if self.max_attempts is not None:
            out += f", {self.max_attempts.describe()}"
        return out

    def _floor(self) -> tuple[int, str] | None:
        """The strictest level floor and how to say it."""
        floors = []
        if self.min_tier is not None:
            floors.append((TIER_FLOOR[self.min_tier], f"tier {self.min_tier} (level {TIER_FLOOR[self.min_tier]})"))
        if self.min_level is not None:
            floors.append((self.min_level, f"level {self.min_level}"))
        return max(floors) if floors else None

    def _shortfalls(self, acc: AcceptedCredential, now: datetime, level: bool = True) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        floor = self._floor()
        if level and floor is not None and acc.acx_level < floor[0]:
            code = CODE_TIER_BELOW if self.min_tier is not None else CODE_LEVEL_BELOW
            out.append((code, f"level {acc.acx_level} ({acc.career_tier}) is below {floor[1]}"))
        if self.issuers is not None and without_fragment(acc.issuer) not in self.issuers:
            out.append((CODE_ISSUER_NOT_ALLOWED, f"issuer {acc.issuer} is not one the policy names"))
        if self.max_age_seconds is not None:
            issued = parse_datetime(acc.valid_from)
            if issued is None:
                out.append((CODE_TOO_OLD, f"validFrom {acc.valid_from!r} is unreadable, so its age is unknown"))
            elif (now - issued).total_seconds() > self.max_age_seconds:
                out.append((CODE_TOO_OLD, f"issued {acc.valid_from}, older than {self.max_age_text}"))
        if self.benchmark_id is not None and (
            acc.benchmark_id != self.benchmark_id
            or (self.benchmark_version is not None and acc.benchmark_version != self.benchmark_version)
        ):
            want = self.benchmark_id + (f"@{self.benchmark_version}" if self.benchmark_version else "")
            out.append((CODE_BENCHMARK_MISMATCH,
                        f"measured on {acc.benchmark_id}@{acc.benchmark_version}, the policy wants {want}"))
        if self.model is not None and (acc.model or {}).get("id") != self.model:
            got = (acc.model or {}).get("id") or "no model"
            out.append((CODE_MODEL_MISMATCH, f"earned with {got}, the policy wants model {self.model}"))
        return out

    def _matches(self, task_type: str, stack: tuple[str, ...], domain: str | None) -> bool:
        if task_type != self.task_type or not set(self.stack) <= set(stack):
            return False
        return self.domain is None or domain == self.domain

    def evaluate(self, resolution: Resolution, now: datetime) -> RequirementResult:
        """The level (or quorum) requirement, then the attempt bound on the same claims."""
        result = self._evaluate_levels(resolution, now)
        if self.max_attempts is None or result.codes == (CODE_NOT_CLAIMED,):
            return result
        bound = self.max_attempts
        over = []
        for c in resolution.capabilities:
            if self._matches(c.capability.task_type, c.capability.stack, c.capability.domain):
                n = attempts_in_window(c.attempts, now, bound.window_seconds, bound.scope)
                if n > bound.count:
                    over.append(f"{c.capability.display()}: {n} attempts{bound.by} in the last {bound.window}, "
                                f"more than the {bound.count} allowed ({'; '.join(c.attempts.lines())})")
        if not over:
            return result
        return RequirementResult(result.description, False, (*over, *(() if result.met else result.reasons)),
                                 _unique([CODE_TOO_MANY_ATTEMPTS, *result.codes]), result.considered)

    def _evaluate_levels(self, resolution: Resolution, now: datetime) -> RequirementResult:
        desc = self.describe()
        claims = [c for c in resolution.capabilities
                  if self._matches(c.capability.task_type, c.capability.stack, c.capability.domain)]
        if not claims:
            unmatched = tuple(Considered(r.digest, r.credential_digest, r.issuer, "unmatched", r.codes, r.messages)
                              for r in resolution.unmatched)
            return RequirementResult(
                desc, False,
                (f"the cartridge claims no {self.task_type} capability"
                 + (f" whose stack includes {', '.join(self.stack)}" if self.stack else "")
                 + (f" in domain {self.domain}" if self.domain else ""),),
                (CODE_NOT_CLAIMED,), unmatched)
        considered: list[Considered] = []
        reasons: list[str] = []
        codes: list[str] = []
        met = False
        for claim in claims:
            label = claim.capability.display()
            for acc in claim.accepted:
                if claim.effective != VERIFIED:
                    # accepted credentials on a claim the resolver would not verify (a tampered cartridge)
                    considered.append(Considered(acc.attestation_digest, acc.credential_digest, acc.issuer,
                                                 "insufficient", (CODE_NOT_VERIFIED,),
                                                 (f"{label} is NOT VERIFIED ({sig_of(resolution.signature_status)})",)))
                    continue
                short = self._shortfalls(acc, now)
                if short:
                    considered.append(Considered(acc.attestation_digest, acc.credential_digest, acc.issuer,
                                                 "insufficient", _unique([c for c, _ in short]),
                                                 tuple(m for _, m in short)))
                else:
                    met = True
                    considered.append(Considered(acc.attestation_digest, acc.credential_digest, acc.issuer,
                                                 "satisfies", (),
                                                 (f"{label}: {level_phrase(acc)}",)))
            for rej in claim.rejected:
                considered.append(Considered(rej.digest, rej.credential_digest, rej.issuer, "rejected",
                                             rej.codes, rej.messages))
        if self.min_verifiers is not None:
            return self._quorum(claims, now, tuple(considered), resolution.partial)
        if met:
            best = next(c for c in considered if c.outcome == "satisfies")
            return RequirementResult(desc, True, best.messages, (), tuple(considered))
        if not considered:
            codes.append(CODE_NO_ATTESTATION)
            reasons.append(f"{', '.join(c.capability.display() for c in claims)}: no level attestation found")
        for c in considered:
            codes += list(c.codes)
            digest12 = c.attestation_digest.split(":", 1)[-1][:12]
            reasons.append(f"attestation {digest12} {c.outcome}: {', '.join(c.codes) or 'no code'}")
        if resolution.partial:
            codes.append(CODE_PARTIAL)
            reasons.append("the resolution is partial (a bound was hit): a qualifying attestation may be unseen")
        return RequirementResult(desc, False, tuple(reasons), _unique(codes), tuple(considered))


    def _quorum(self, claims: list[CapabilityResolution], now: datetime, considered: tuple[Considered, ...],
                partial: bool) -> RequirementResult:
        """N distinct verifiers must vouch for one claim; its level is the lowest of the N (``quorum_unmet``)."""
        assert self.min_verifiers is not None
        desc, floor, found = self.describe(), self._floor(), []
        for claim in claims:
            pool = [a for a in claim.accepted if claim.effective == VERIFIED and not self._shortfalls(a, now, False)]
            q = quorum(pool, self.min_verifiers)
            if q.met and (floor is None or (q.level or 0) >= floor[0]):
                return RequirementResult(desc, True, (f"{claim.capability.display()}: {q.describe()}",), (),
                                         considered)
            found.append((claim, q))
        codes: list[str] = []
        why: list[str] = []
        for claim, q in found:
            if not q.met:
                codes.append(CODE_QUORUM_UNMET)
            elif floor is not None:
                codes.append(CODE_TIER_BELOW if self.min_tier is not None else CODE_LEVEL_BELOW)
            why.append(f"{claim.capability.display()}: {q.describe()}" + (
                f", below {floor[1]}" if q.met and floor is not None else ""))
        if partial:
            codes.append(CODE_PARTIAL)
            why.append("the resolution is partial (a bound was hit): a qualifying attestation may be unseen")
        return RequirementResult(desc, False, tuple(why), _unique(codes), considered)
