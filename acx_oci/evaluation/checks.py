"""What a verification run reports: one :class:`Check` per rule, and the context it runs in.

Shared by :mod:`verify`, :mod:`status_check` and :mod:`evidence_check`, so
each can stay small without importing the others. Nothing here touches the
network: DIDs resolve from the trust file (and did:key locally), and from did:web
documents the caller fetched because the judge asked for them
(:mod:`acx_oci.evaluation.did_documents`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from acx_oci import reasons
from acx_oci.crypto import dataintegrity
from acx_oci.model import statuslist
from acx_oci.trust import Trust, did
from acx_oci.urls import without_fragment

KeyResolver = Callable[[str], list[tuple[str, bytes]]]
StatusCache = dict[tuple[int, str | None, str | None, str | None, int], tuple[list[tuple[str, str]], bytes | None]]


@dataclass(frozen=True)
class Check:
    """One rule's verdict. ``skipped`` checks pass but say why they could not run."""

    name: str
    ok: bool
    code: str
    message: str
    skipped: bool = False

    def to_json(self) -> dict[str, Any]:
        """The check as ``--json`` prints it (field names are a stable interface)."""
        return {"name": self.name, "ok": self.ok, "code": self.code, "message": self.message,
                "skipped": self.skipped}


@dataclass(frozen=True)
class VerifyContext:
    """Everything a verdict depends on besides the credential, passed in so the same inputs give the same verdict."""

    trust: Trust | None
    now: datetime
    expected_rom_digest: str | None = None
    expected_manifest_digest: str | None = None
    cartridge_controller: str | None = None
    rom_signer: str | None = None
    rom_signer_key: bytes | None = None  # the key the ROM signature verified with (independence by key)
    status_list: dict[str, Any] | None = None
    # The highest ``acx:sequence`` this consumer has seen for the list (0: no history); a lower one is a rollback.
    status_min_sequence: int = 0
    allow_unknown_status: bool = False
    evidence: dict[str, bytes] | None = None
    max_status_bytes: int = statuslist.DEFAULT_MAX_BYTES
    # Key resolution beyond the trust file: did:web documents already fetched (the judge's DidDocuments,
    # a pure lookup); None resolves offline only.
    resolve_keys: KeyResolver | None = None
    # Memo for status-list verdicts, shared by the caller across many credentials that
    # point at the same list object (resolve checks 1,000 credentials against one list).
    status_cache: StatusCache | None = None


@dataclass(frozen=True)
class VerifyResult:
    """Every check one verification ran; verified only when there is at least one and none failed."""

    checks: list[Check] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        """True when every check passed (an empty run verifies nothing)."""
        return bool(self.checks) and all(c.ok for c in self.checks)

    @property
    def codes(self) -> list[str]:
        """The reason codes of the failed checks, in run order."""
        return [c.code for c in self.checks if not c.ok]

    @property
    def skipped(self) -> list[str]:
        """Names of the checks that could not run (they pass, but say so)."""
        return [c.name for c in self.checks if c.skipped]

    def to_json(self) -> dict[str, Any]:
        """The result as ``vc verify --json`` prints it."""
        return {"verified": self.verified, "codes": self.codes, "checks": [c.to_json() for c in self.checks]}


def ok(name: str, message: str) -> Check:
    """A passed check."""
    return Check(name, True, "ok", message)


def skip(name: str, message: str) -> Check:
    """A check that could not run: it passes, and its message says why (never silently)."""
    return Check(name, True, "skipped", message, skipped=True)


def bad(name: str, code: str, message: str) -> Check:
    """A failed check with its stable reason code."""
    return Check(name, False, code, message)


def base(did_url: Any) -> str | None:
    """The DID of a DID URL (fragment dropped); None for anything that is not a string."""
    return without_fragment(did_url) if isinstance(did_url, str) else None


def resolver(ctx: VerifyContext) -> KeyResolver:
    """The context's injected key resolver, else an offline one (trust file documents and did:key)."""
    if ctx.resolve_keys is not None:
        return ctx.resolve_keys
    return offline_keys(ctx.trust)


def offline_keys(trust: Trust | None) -> KeyResolver:
    """Resolve keys with no I/O: did:key from the DID itself, did:web only from ``trust``'s documents."""
    return lambda ref: did.assertion_keys(ref, trust, None)


def check_proofs(document: dict[str, Any], resolve: KeyResolver, now: datetime | None,
                 name: str = "proof", issuer: str | None = None) -> list[Check]:
    """Every proof verifies and (when ``issuer`` is given) is by a method the issuer controls."""
    results = dataintegrity.verify(document, lambda vm: [key for _, key in resolve(vm)], now=now)
    checks: list[Check] = []
    failed = [r for r in results if not r.ok]
    if failed:
        checks.append(bad(name, failed[0].code, "; ".join(r.message for r in failed)))
    else:
        checks.append(ok(name, "; ".join(r.message for r in results)))
    if issuer is not None:
        methods = [r.verification_method for r in results]
        foreign = [m for m in methods if base(m) != issuer]
        if not methods or foreign:
            checks.append(bad(f"{name}_issuer", reasons.ISSUER_KEY_MISMATCH,
                               f"the proof is by {', '.join(str(m) for m in foreign) or 'nobody'}, "
                               f"not by a key of the issuer {issuer}"))
        else:
            checks.append(ok(f"{name}_issuer", f"signed by the issuer's own key ({', '.join(map(str, methods))})"))
    return checks
