"""What the judge decides on and what it says: the fetched bytes in, the judgement out (pure data).

Split from :mod:`acx_oci.evaluation.judge` (which re-exports every name) so the judge's walk reads on its own;
:class:`Expected` is what one credential is judged against, :class:`CartridgeFacts` a loaded cartridge's.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from acx_oci.evaluation.checks import Check
from acx_oci.evaluation.did_documents import DidAnswer
from acx_oci.evaluation.log_check import LogKeys, LogView
from acx_oci.model import STATUS_TAMPERED, AcceptedCredential, CapabilityRecord, LevelCredential, Rejection
from acx_oci.model.level_credential import level_credential

StatusKey = tuple[str, str]  # (status list URL, issuer DID)


@dataclass(frozen=True)
class Expected:
    """What a credential is judged against; None: that binding is not checked (``vc verify`` without the option)."""

    manifest_digest: str | None = None
    rom_digest: str | None = None
    controller: str | None = None
    signer: str | None = None
    signer_key: bytes | None = None
    claims: tuple[CapabilityRecord, ...] | None = None  # None: no cartridge, so no claim to count for is checked


@dataclass(frozen=True)
class CartridgeFacts:
    """What the judge needs of the loaded cartridge: its digests, its parties and its claims."""

    manifest_digest: str
    rom_digest: str
    controller: str
    signer: str | None
    signer_key: bytes | None
    signature_status: str
    capabilities: tuple[CapabilityRecord, ...]

    @property
    def tampered(self) -> bool:
        """A tampered cartridge verifies no claim, whatever its credentials say."""
        return self.signature_status == STATUS_TAMPERED

    @property
    def expected(self) -> Expected:
        """The cartridge as every credential of it is judged against."""
        return Expected(self.manifest_digest, self.rom_digest, self.controller, self.signer, self.signer_key,
                        self.capabilities)


@dataclass(frozen=True)
class FetchedAttestation:
    """One attestation as fetched: its credential (None when unusable), records, and any fetch-time reasons."""

    digest: str  # the attestation manifest's
    offered: str = ""  # the (unsigned) capability annotation: which claim the pusher offered it for
    credential: LevelCredential | None = None  # read at the door (a plain dict is refused: TypeError)
    credential_digest: str | None = None
    evidence_present: frozenset[str] = frozenset()  # every evidence layer's digest
    evidence: Mapping[str, bytes] | None = None  # the record bytes, when fetched (--check-evidence)
    codes: tuple[str, ...] = ()  # found while fetching (subject_mismatch, schema_invalid, fetch_failed, ...)
    messages: tuple[str, ...] = ()
    log_proof: bytes | None = None  # the attestation's log-proof layer (acx_oci.tlog.proof), when it has one
    # the game records travel in one layer that was not fetched: every record the credential names counts as
    # present (replay fetches the layer and finds out)
    records_bundled: bool = False

    def __post_init__(self) -> None:
        if self.credential is not None:  # only a credential read at the door reaches the judge
            level_credential(self.credential, f"attestation {self.digest}")


@dataclass(frozen=True)
class Material:
    """Every byte one decision needs, fetched beforehand."""

    attestations: tuple[FetchedAttestation, ...] = ()
    # per status-list URL, every copy found (the cartridge's repository, user files, HTTPS), in that order
    status_lists: Mapping[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    # the highest acx:sequence this consumer remembers per (URL, issuer); absent: 0 (a first-time consumer)
    min_sequences: Mapping[StatusKey, int] = field(default_factory=dict)
    # per (URL, issuer), the newest list this consumer kept: judged beside the copies found (docs/concepts.md)
    kept_lists: Mapping[StatusKey, dict[str, Any]] = field(default_factory=dict)
    # per log origin, what was fetched of it (acx_oci.evaluation.log_check); None: log checking is off (--no-log)
    logs: Mapping[str, LogView] | None = None
    # per log origin, the trust file's pinned keys, parsed once at the door (log_check.pinned_keys)
    log_keys: Mapping[str, LogKeys] = field(default_factory=dict)
    # per credential digest, the keys its proof verified with before (the consumer's proof cache, read beforehand):
    # the same bytes naming the same keys need no signature check (every other rule still runs)
    known_proofs: Mapping[str, frozenset[bytes]] = field(default_factory=dict)


@dataclass(frozen=True)
class Judgement:
    """Per attestation, accepted (by claim) or rejected, and the status lists that verified (to remember)."""

    accepted: Mapping[str, tuple[AcceptedCredential, ...]]
    rejected: Mapping[str, tuple[Rejection, ...]]
    unmatched: tuple[Rejection, ...]
    status_seen: Mapping[StatusKey, int]  # the sequence of every list that verified as its issuer's
    verifications: int = 0  # credentials put through every rule (each at most once)
    unconfirmed: tuple[str, ...] = ()  # attestations left undecided: the caller answered a replay with None
    status_lists_seen: Mapping[StatusKey, dict[str, Any]] = field(default_factory=dict)  # the newest of each
    checks: Mapping[str, tuple[Check, ...]] = field(default_factory=dict)  # per attestation verified: every rule
    # per credential digest that passed every rule, the keys its proof verified with, when not already in
    # ``Material.known_proofs``: for the caller to keep (the judge writes no cache)
    proofs_verified: Mapping[str, frozenset[bytes]] = field(default_factory=dict)



@dataclass(frozen=True)
class NeedReplay:
    """What the judge needs before this credential may decide: the replay of its game records, answered with
    the replay's check (None: could not decide, e.g. a deadline)."""

    accepted: AcceptedCredential


@dataclass(frozen=True)
class NeedDidDocument:
    """What the judge needs to resolve this did:web (not in the trust file): its DID document, answered with the
    document or the error saying why there is none. did:key needs no document: it is derived from the DID."""

    did: str


# python-tuf's shape: the judge yields what it needs, the caller fetches and sends the answer, the judge goes on
Need = NeedReplay | NeedDidDocument
Answer = Check | DidAnswer  # a replay's check, or a DID document (or why there is none); None: no answer
JudgeSteps = Generator[Need, Answer, Judgement]

T = TypeVar("T")


def settled(steps: Generator[Need, Answer, T]) -> T:
    """The result of a judge that was told not to ask (replay and DID fetches off): it never yields."""
    try:
        need = next(steps)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    raise AssertionError(f"the judge asked for {need!r} though asking was off")
