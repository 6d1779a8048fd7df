"""The verifier's ledger: an embedded SQLite database under ``--state DIR``.

It keeps what anti-gaming needs to outlive one process: every attempt (run
or refused), the cooldown per (ROM digest, benchmark digest) that every run
starts whether it issued or not - so resubmitting until lucky costs a
cooldown per try - and the state's status list (random UUID, randomly
allocated indices, every place the signed list was published, and the
``acx:sequence`` it was last signed with) so ``revoke`` can flip one bit and
re-publish it everywhere with a higher sequence. Times are passed in (``now``).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from acx_oci.errors import UsageError
from acx_oci.model.statuslist import MIN_ENTRIES, allocate_index

DB_FILE = "ledger.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    cartridge_ref TEXT NOT NULL,
    cartridge_manifest_digest TEXT NOT NULL,
    rom_digest TEXT NOT NULL,
    benchmark_id TEXT NOT NULL,
    benchmark_version TEXT NOT NULL,
    benchmark_digest TEXT NOT NULL,
    issuer TEXT NOT NULL,
    solver TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running', 'issued', 'not-issued', 'refused', 'aborted')),
    starts_cooldown INTEGER NOT NULL,
    reasons TEXT NOT NULL DEFAULT '[]',
    mu REAL, sigma REAL, games INTEGER, acx_level INTEGER,
    credential_id TEXT
);
CREATE INDEX IF NOT EXISTS attempts_cooldown ON attempts (rom_digest, benchmark_digest, started_at);
CREATE TABLE IF NOT EXISTS status_lists (
    uuid TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    created_at TEXT NOT NULL,
    size INTEGER NOT NULL,
    purpose TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS status_entries (
    list_uuid TEXT NOT NULL REFERENCES status_lists(uuid),
    idx INTEGER NOT NULL,
    credential_id TEXT NOT NULL UNIQUE,
    attempt_id INTEGER REFERENCES attempts(id),
    allocated_at TEXT NOT NULL,
    revoked_at TEXT,
    reason TEXT,
    PRIMARY KEY (list_uuid, idx)
);
CREATE TABLE IF NOT EXISTS credentials (
    credential_id TEXT PRIMARY KEY,
    credential_digest TEXT NOT NULL,
    attestation_digest TEXT,
    attestation_ref TEXT,
    issued_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS credentials_digest ON credentials (credential_digest);
CREATE INDEX IF NOT EXISTS credentials_attestation ON credentials (attestation_digest);
CREATE TABLE IF NOT EXISTS publications (
    list_uuid TEXT NOT NULL REFERENCES status_lists(uuid),
    location TEXT NOT NULL,
    digest TEXT,
    published_at TEXT NOT NULL,
    PRIMARY KEY (list_uuid, location)
);
"""


def _ts(dt: datetime) -> str:
    if dt.tzinfo is None:
        raise UsageError("ledger: timestamps must be timezone-aware")
    return dt.astimezone(UTC).isoformat(timespec="microseconds")


def _dt(text: str) -> datetime:
    return datetime.fromisoformat(text)


@dataclass(frozen=True)
class Attempt:
    id: int
    started_at: datetime
    finished_at: datetime | None
    cartridge_ref: str
    cartridge_manifest_digest: str
    rom_digest: str
    benchmark_id: str
    benchmark_version: str
    benchmark_digest: str
    issuer: str
    solver: dict[str, Any]
    state: str
    starts_cooldown: bool
    reasons: list[str]
    mu: float | None
    sigma: float | None
    games: int | None
    acx_level: int | None
    credential_id: str | None
    # None: nothing to publish (or a state from before this column); "pending": issued, signed, not yet (fully)
    # pushed - no cooldown until it is; "published": pushed (the cooldown counts from started_at).
    publication: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "startedAt": self.started_at.isoformat(),
            "finishedAt": self.finished_at.isoformat() if self.finished_at else None,
            "cartridgeRef": self.cartridge_ref, "cartridgeManifestDigest": self.cartridge_manifest_digest,
            "romDigest": self.rom_digest, "benchmarkId": self.benchmark_id,
            "benchmarkVersion": self.benchmark_version, "benchmarkDigest": self.benchmark_digest,
            "issuer": self.issuer, "solver": self.solver, "state": self.state, "reasons": self.reasons,
            "mu": self.mu, "sigma": self.sigma, "games": self.games, "acxLevel": self.acx_level,
            "credentialId": self.credential_id, "publication": self.publication,
        }


def _attempt(row: sqlite3.Row) -> Attempt:
    return Attempt(
        id=row["id"], started_at=_dt(row["started_at"]),
        finished_at=_dt(row["finished_at"]) if row["finished_at"] else None,
        cartridge_ref=row["cartridge_ref"], cartridge_manifest_digest=row["cartridge_manifest_digest"],
        rom_digest=row["rom_digest"], benchmark_id=row["benchmark_id"], benchmark_version=row["benchmark_version"],
        benchmark_digest=row["benchmark_digest"], issuer=row["issuer"], solver=json.loads(row["solver"]),
        state=row["state"], starts_cooldown=bool(row["starts_cooldown"]), reasons=json.loads(row["reasons"]),
        mu=row["mu"], sigma=row["sigma"], games=row["games"], acx_level=row["acx_level"],
        credential_id=row["credential_id"], publication=row["publication"],
    )


@dataclass(frozen=True)
class StatusList:
    uuid: str
    url: str  # statusListCredential: its last path segment is the UUID
    created_at: datetime
    size: int
    purpose: str


@dataclass(frozen=True)
class CooldownRefusal:
    """Why a new run may not start yet."""

    previous: Attempt
    until: datetime

    def reason(self) -> str:
        return (f"cooldown: attempt {self.previous.id} on this ROM and benchmark started "
                f"{self.previous.started_at.isoformat(timespec='seconds')} ({self.previous.state}); "
                f"next attempt allowed after {self.until.isoformat(timespec='seconds')}")


class Ledger:
    """One verifier state directory. Use as a context manager, or call :meth:`close`."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        try:
            state_dir.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(state_dir / DB_FILE, timeout=30, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise UsageError(f"verifier state {state_dir}: cannot open the ledger ({exc})") from None
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.executescript(_SCHEMA)
        columns = {r[1] for r in self.db.execute("PRAGMA table_info(status_lists)")}
        if "issuer" not in columns:  # states written before lists were kept per issuer
            self.db.execute("ALTER TABLE status_lists ADD COLUMN issuer TEXT")
        if "publication" not in {r[1] for r in self.db.execute("PRAGMA table_info(attempts)")}:
            self.db.execute("ALTER TABLE attempts ADD COLUMN publication TEXT")
        if "sequence" not in columns:  # states written before lists carried a sequence: their lists count as 0
            self.db.execute("ALTER TABLE status_lists ADD COLUMN sequence INTEGER NOT NULL DEFAULT 0")

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    # --- attempts ---------------------------------------------------------------------------------------

    def cooldown_refusal(self, rom_digest: str, benchmark_digest: str, now: datetime,
                         cooldown: timedelta) -> CooldownRefusal | None:
        if cooldown <= timedelta(0):
            return None
        row = self.db.execute(
            "SELECT * FROM attempts WHERE rom_digest = ? AND benchmark_digest = ? AND starts_cooldown = 1 "
            "ORDER BY started_at DESC, id DESC LIMIT 1", (rom_digest, benchmark_digest)).fetchone()
        if row is None:
            return None
        prev = _attempt(row)
        until = prev.started_at + cooldown
        return CooldownRefusal(prev, until) if now < until else None

    def begin_attempt(self, *, now: datetime, cooldown: timedelta, cartridge_ref: str, manifest_digest: str,
                      rom_digest: str, benchmark_id: str, benchmark_version: str, benchmark_digest: str,
                      issuer: str, solver: dict[str, Any]) -> tuple[int, CooldownRefusal | None]:
        """Atomically check the cooldown and log the attempt: ``running`` (starts a cooldown) or ``refused``."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            refusal = self.cooldown_refusal(rom_digest, benchmark_digest, now, cooldown)
            cur = self.db.execute(
                "INSERT INTO attempts (started_at, finished_at, cartridge_ref, cartridge_manifest_digest, rom_digest,"
                " benchmark_id, benchmark_version, benchmark_digest, issuer, solver, state, starts_cooldown, reasons)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (_ts(now), _ts(now) if refusal else None, cartridge_ref, manifest_digest, rom_digest, benchmark_id,
                 benchmark_version, benchmark_digest, issuer, json.dumps(solver, sort_keys=True),
                 "refused" if refusal else "running", 0 if refusal else 1,
                 json.dumps([refusal.reason()] if refusal else [])))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return int(cur.lastrowid or 0), refusal

    def log_refusal(self, *, now: datetime, cartridge_ref: str, manifest_digest: str, rom_digest: str,
                    benchmark_id: str, benchmark_version: str, benchmark_digest: str, issuer: str,
                    solver: dict[str, Any], reasons: list[str]) -> int:
        """A refusal before running (bad signature, capability mismatch...): logged, no cooldown."""
        cur = self.db.execute(
            "INSERT INTO attempts (started_at, finished_at, cartridge_ref, cartridge_manifest_digest, rom_digest,"
            " benchmark_id, benchmark_version, benchmark_digest, issuer, solver, state, starts_cooldown, reasons)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'refused', 0, ?)",
            (_ts(now), _ts(now), cartridge_ref, manifest_digest, rom_digest, benchmark_id, benchmark_version,
             benchmark_digest, issuer, json.dumps(solver, sort_keys=True), json.dumps(reasons)))
        return int(cur.lastrowid or 0)

    def finish_attempt(self, attempt_id: int, *, now: datetime, issued: bool, reasons: list[str],
                       mu: float | None = None, sigma: float | None = None, games: int | None = None,
                       acx_level: int | None = None, credential_id: str | None = None,
                       aborted: bool = False, starts_cooldown: bool = True) -> None:
        """``starts_cooldown=False``: a lane error (the registry failed), not an attempt - no cooldown."""
        state = "aborted" if aborted else "issued" if issued else "not-issued"
        self.db.execute(
            "UPDATE attempts SET finished_at = ?, state = ?, reasons = ?, mu = ?, sigma = ?, games = ?,"
            " acx_level = ?, credential_id = ?, starts_cooldown = ? WHERE id = ?",
            (_ts(now), state, json.dumps(reasons), mu, sigma, games, acx_level, credential_id,
             1 if starts_cooldown else 0, attempt_id))

    def set_publication(self, attempt_id: int, publication: str, *, starts_cooldown: bool) -> None:
        """``pending`` (no cooldown: a result the registry never took is not an attempt) or ``published``."""
        self.db.execute("UPDATE attempts SET publication = ?, starts_cooldown = ? WHERE id = ?",
                        (publication, 1 if starts_cooldown else 0, attempt_id))

    def attempt_of_credential(self, credential_id: str) -> Attempt | None:
        row = self.db.execute("SELECT * FROM attempts WHERE credential_id = ?", (credential_id,)).fetchone()
        return _attempt(row) if row is not None else None

    def later_runs(self, attempt: Attempt) -> list[Attempt]:
        """Runs on the same ROM and benchmark that played after ``attempt`` (a newer run supersedes it)."""
        rows = self.db.execute("SELECT * FROM attempts WHERE rom_digest = ? AND benchmark_digest = ? AND id > ? "
                               "AND state IN ('running', 'issued', 'not-issued') ORDER BY id",
                               (attempt.rom_digest, attempt.benchmark_digest, attempt.id)).fetchall()
        return [_attempt(r) for r in rows]

    def attempts(self, rom_digest: str | None = None) -> list[Attempt]:
        if rom_digest is None:
            rows = self.db.execute("SELECT * FROM attempts ORDER BY id").fetchall()
        else:
            rows = self.db.execute("SELECT * FROM attempts WHERE rom_digest = ? ORDER BY id", (rom_digest,)).fetchall()
        return [_attempt(r) for r in rows]

    # --- the status list --------------------------------------------------------------------------------

    def status_list(self, now: datetime, base_url: str, size: int = MIN_ENTRIES,
                    purpose: str = "revocation", issuer: str | None = None) -> StatusList:
        """The issuer's list in this state, created on first use as ``base_url/<random UUID>``.

        One list per issuer: only a credential's own issuer may sign its list, so a state
        used under two DIDs (a did:key and later a did:web, a rotation) keeps two lists.
        """
        row = self.db.execute("SELECT * FROM status_lists WHERE purpose = ? AND (issuer IS ? OR issuer IS NULL AND "
                              "? IS NULL) ORDER BY created_at LIMIT 1", (purpose, issuer, issuer)).fetchone()
        if row is None and issuer is not None:
            # a list from before lists were kept per issuer, used only by this issuer: adopt it
            legacy = self.db.execute("SELECT * FROM status_lists WHERE purpose = ? AND issuer IS NULL "
                                     "ORDER BY created_at LIMIT 1", (purpose,)).fetchone()
            if legacy is not None and self._issuers_of(legacy["uuid"]) <= {issuer}:
                self.db.execute("UPDATE status_lists SET issuer = ? WHERE uuid = ?", (issuer, legacy["uuid"]))
                row = legacy
        if row is None:
            new = str(uuid.uuid4())
            self.db.execute("INSERT INTO status_lists (uuid, url, created_at, size, purpose, issuer) "
                            "VALUES (?, ?, ?, ?, ?, ?)",
                            (new, base_url.rstrip("/") + "/" + new, _ts(now), size, purpose, issuer))
            row = self.db.execute("SELECT * FROM status_lists WHERE uuid = ?", (new,)).fetchone()
        return StatusList(row["uuid"], row["url"], _dt(row["created_at"]), row["size"], row["purpose"])

    def next_sequence(self, list_uuid: str) -> int:
        """Raise the list's ``acx:sequence`` by one and return it: call once per re-sign (attest, revoke, refresh).

        Atomic, so two processes re-signing the same state never sign the same sequence twice.
        """
        self.db.execute("BEGIN IMMEDIATE")
        try:
            cur = self.db.execute("UPDATE status_lists SET sequence = sequence + 1 WHERE uuid = ?", (list_uuid,))
            if cur.rowcount != 1:
                raise UsageError(f"ledger: unknown status list {list_uuid}")
            row = self.db.execute("SELECT sequence FROM status_lists WHERE uuid = ?", (list_uuid,)).fetchone()
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return int(row[0])

    def sequence(self, list_uuid: str) -> int:
        """The sequence the list was last signed with (0: never signed with one)."""
        row = self.db.execute("SELECT sequence FROM status_lists WHERE uuid = ?", (list_uuid,)).fetchone()
        if row is None:
            raise UsageError(f"ledger: unknown status list {list_uuid}")
        return int(row[0])

    def allocate(self, list_uuid: str, credential_id: str, now: datetime, attempt_id: int | None = None,
                 randbelow: Callable[[int], int] = secrets.randbelow) -> int:
        """A random unused index (so an index says nothing about issue order), recorded atomically."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            size = self.db.execute("SELECT size FROM status_lists WHERE uuid = ?", (list_uuid,)).fetchone()
            if size is None:
                raise UsageError(f"ledger: unknown status list {list_uuid}")
            used = {r[0] for r in self.db.execute("SELECT idx FROM status_entries WHERE list_uuid = ?", (list_uuid,))}
            idx = allocate_index(int(size[0]), used, randbelow)
            self.db.execute("INSERT INTO status_entries (list_uuid, idx, credential_id, attempt_id, allocated_at)"
                            " VALUES (?, ?, ?, ?, ?)", (list_uuid, idx, credential_id, attempt_id, _ts(now)))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return idx

    def revoke(self, credential_id: str, now: datetime, reason: str) -> tuple[str, int]:
        row = self.db.execute("SELECT list_uuid, idx FROM status_entries WHERE credential_id = ?",
                              (credential_id,)).fetchone()
        if row is None:
            raise UsageError(f"ledger: no credential {credential_id} was issued from this state")
        self.db.execute("UPDATE status_entries SET revoked_at = COALESCE(revoked_at, ?), reason = ? "
                        "WHERE credential_id = ?", (_ts(now), reason, credential_id))
        return str(row[0]), int(row[1])

    def revoked_indices(self, list_uuid: str) -> list[int]:
        return [r[0] for r in self.db.execute(
            "SELECT idx FROM status_entries WHERE list_uuid = ? AND revoked_at IS NOT NULL ORDER BY idx", (list_uuid,))]

    def entries(self, list_uuid: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.db.execute(
            "SELECT * FROM status_entries WHERE list_uuid = ? ORDER BY allocated_at", (list_uuid,))]

    def record_publication(self, list_uuid: str, location: str, digest: str | None, now: datetime) -> None:
        self.db.execute("INSERT INTO publications (list_uuid, location, digest, published_at) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT (list_uuid, location) DO UPDATE SET digest = excluded.digest, "
                        "published_at = excluded.published_at", (list_uuid, location, digest, _ts(now)))

    def publications(self, list_uuid: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.db.execute(
            "SELECT location, digest, published_at FROM publications WHERE list_uuid = ? ORDER BY location",
            (list_uuid,))]

    # --- what was issued, so ``revoke`` can be given any of its names ---------------------------------

    def record_credential(self, credential_id: str, credential_digest: str, now: datetime,
                          attestation_digest: str | None = None, attestation_ref: str | None = None) -> None:
        self.db.execute("INSERT INTO credentials (credential_id, credential_digest, attestation_digest, "
                        "attestation_ref, issued_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (credential_id) DO UPDATE "
                        "SET attestation_digest = COALESCE(excluded.attestation_digest, attestation_digest), "
                        "attestation_ref = COALESCE(excluded.attestation_ref, attestation_ref)",
                        (credential_id, credential_digest, attestation_digest, attestation_ref, _ts(now)))

    def find_credential(self, name: str) -> str | None:
        """The credential id for a credential id, credential digest or attestation digest."""
        row = self.db.execute("SELECT credential_id FROM credentials WHERE credential_id = ? OR "
                              "credential_digest = ? OR attestation_digest = ?", (name, name, name)).fetchone()
        if row is not None:
            return str(row[0])
        row = self.db.execute("SELECT credential_id FROM status_entries WHERE credential_id = ?", (name,)).fetchone()
        return str(row[0]) if row is not None else None

    def status_list_by_uuid(self, list_uuid: str) -> StatusList:
        row = self.db.execute("SELECT * FROM status_lists WHERE uuid = ?", (list_uuid,)).fetchone()
        if row is None:
            raise UsageError(f"ledger: unknown status list {list_uuid}")
        return StatusList(row["uuid"], row["url"], _dt(row["created_at"]), row["size"], row["purpose"])

    def status_list_uuids(self) -> list[str]:
        return [str(r[0]) for r in self.db.execute("SELECT uuid FROM status_lists ORDER BY created_at")]

    def _issuers_of(self, list_uuid: str) -> set[str]:
        return {str(r[0]) for r in self.db.execute(
            "SELECT DISTINCT a.issuer FROM status_entries e JOIN attempts a ON a.id = e.attempt_id "
            "WHERE e.list_uuid = ?", (list_uuid,))}

    def list_issuer(self, list_uuid: str) -> str | None:
        """The DID that signs this list: recorded with it, else the one DID that issued from it."""
        row = self.db.execute("SELECT issuer FROM status_lists WHERE uuid = ?", (list_uuid,)).fetchone()
        if row is not None and row[0]:
            return str(row[0])
        issuers = self._issuers_of(list_uuid)
        return next(iter(issuers)) if len(issuers) == 1 else None

    def list_of_credential(self, credential_id: str) -> str | None:
        row = self.db.execute("SELECT list_uuid FROM status_entries WHERE credential_id = ?",
                              (credential_id,)).fetchone()
        return str(row[0]) if row is not None else None
