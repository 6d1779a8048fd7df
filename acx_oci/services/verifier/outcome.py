"""What ``attest`` returns: one of three frozen values, ``Refused``, ``NotIssued`` or ``Issued``.

Each says only what its case has (a refusal played nothing, so it has no rating); the ``--json`` document
and the exit code come from the one function below, so ``result.json`` and the CLI never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from acx_oci.model import LevelCredential
from acx_oci.rating import engine
from acx_oci.services.verifier import transcripts as tx
from acx_oci.services.verifier.log import Logged
from acx_oci.services.verifier.publish import Published

ISSUED, NOT_ISSUED, REFUSED = "issued", "not-issued", "refused"


def summary_json(status: str, reasons: tuple[str, ...], result: engine.Result | None, rom_digest: str | None,
                 credential_path: Path | None = None, replay: tx.ModelReplayReport | None = None,
                 published: Published | None = None, publication_error: str | None = None) -> dict[str, Any]:
    """The top-level fields of ``attest --json`` and of ``result.json`` (names fixed: scripts read them)."""
    r = result
    return {
        "issued": status == ISSUED,
        "status": status,
        "reasons": list(reasons),
        "mu": r.rating.mu if r else None,
        "sigma": r.rating.sigma if r else None,
        "games": r.rated if r else 0,
        "passRate": r.pass_rate if r else None,
        "R": r.conservative if r else None,
        "acxLevel": r.level if r else None,
        "careerTier": r.tier if r else None,
        "romDigest": rom_digest,
        "credential": str(credential_path) if credential_path else None,
        "attestationDigest": published.attestation_digest if published else None,
        "statusListRef": published.status_list_ref if published else None,
        **({"publicationError": publication_error} if publication_error else {}),
        **(replay.to_json() if replay else {}),
    }


@dataclass(frozen=True)
class RunFiles:
    """What a run that played wrote to its output folder."""

    result_path: Path
    record_paths: tuple[Path, ...]


@dataclass(frozen=True)
class Refused:
    """Nothing was played (bad signature, not independent, capability not claimed, cooldown...): exit 2."""

    reasons: tuple[str, ...]
    rom_digest: str | None
    manifest_digest: str | None
    attempt_id: int | None
    status: ClassVar[str] = REFUSED
    exit_code: ClassVar[int] = 2

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document."""
        return summary_json(self.status, self.reasons, None, self.rom_digest)


@dataclass(frozen=True)
class NotIssued:
    """The attempt counted but earned no credential (gate, regression, too few exams, no model): exit 1."""

    reasons: tuple[str, ...]
    rom_digest: str | None
    manifest_digest: str | None
    attempt_id: int | None
    result: engine.Result | None = None  # None: stopped before any game
    files: RunFiles | None = None
    replay: tx.ModelReplayReport | None = None
    published: Published | None = None  # the attempt record, pushed as a referrer of the cartridge
    publication_error: str | None = None  # the registry failed the push: the record is kept in out_dir
    logged: Logged | None = None  # the attempt's entry in the verifier's log
    look: bool = False  # a gate looser than the floor: played and shown; no credential, attempt or push
    status: ClassVar[str] = NOT_ISSUED

    @property
    def exit_code(self) -> int:
        """1, or 3 when the registry refused the attempt record (the attempt counts all the same)."""
        return 3 if self.publication_error else 1

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document."""
        return {**summary_json(self.status, self.reasons, self.result, self.rom_digest, replay=self.replay,
                               published=self.published, publication_error=self.publication_error),
                **({"log": self.logged.to_json()} if self.logged else {}), **({"look": True} if self.look else {})}


@dataclass(frozen=True)
class Issued:
    """A signed credential in the output folder, pushed unless ``--no-push`` or the registry failed (exit 3)."""

    reasons: tuple[str, ...]
    rom_digest: str
    manifest_digest: str
    attempt_id: int
    result: engine.Result
    files: RunFiles
    credential: LevelCredential
    credential_path: Path
    status_list_path: Path
    replay: tx.ModelReplayReport | None = None
    published: Published | None = None
    publication_error: str | None = None  # the registry failed the push: signed, kept in out_dir, counted
    logged: Logged | None = None  # the attempt's entry in the verifier's log
    status: ClassVar[str] = ISSUED

    @property
    def exit_code(self) -> int:
        """0, or 3 when the registry refused the push (the attempt counts; ``attest --publish`` pushes it later)."""
        return 3 if self.publication_error else 0

    @property
    def attestation_digest(self) -> str | None:
        """The pushed attestation's digest (None: not pushed)."""
        return self.published.attestation_digest if self.published else None

    @property
    def status_list_ref(self) -> str | None:
        """Where the status list was pushed (None: not pushed)."""
        return self.published.status_list_ref if self.published else None

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document."""
        return {**summary_json(self.status, self.reasons, self.result, self.rom_digest, self.credential_path,
                               self.replay, self.published, self.publication_error),
                **({"log": self.logged.to_json()} if self.logged else {})}


AttestOutcome = Refused | NotIssued | Issued
