"""The verifier's ledger: an embedded SQLite database under ``--state DIR``.

It keeps what anti-gaming needs to outlive one process: every attempt (run
or refused) and the cooldown every played run starts whether it issued or not
(:mod:`ledger_attempts`: per ROM and per claim, so resubmitting or respinning
until lucky costs a cooldown per try), and the state's status list (random UUID, randomly
allocated indices, every place the signed list was published, and the
``acx:sequence`` it was last signed with) so ``revoke`` can flip one bit and
re-publish it everywhere with a higher sequence. Times are passed in (``now``).
"""

from __future__ import annotations

import secrets
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from acx_oci.errors import UsageError
from acx_oci.model import MIN_ENTRIES, allocate_index
from acx_oci.services.verifier.ledger_attempts import Attempt, AttemptsMixin, CooldownRefusal, Subject, migrate
from acx_oci.services.verifier.ledger_attempts import ts as _ts

__all__ = ["DB_FILE", "Attempt", "CooldownRefusal", "Ledger", "StatusList", "Subject"]

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


def _dt(text: str) -> datetime:
    return datetime.fromisoformat(text)


@dataclass(frozen=True)
class StatusList:
    """One status list row of the ledger: where it is published, its size and its purpose."""
    uuid: str
    url: str  # statusListCredential: its last path segment is the UUID
    created_at: datetime
    size: int
    purpose: str


class Ledger(AttemptsMixin):
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
        migrate(self.db)  # attempt columns added since (publication, cartridge id, capability...)
        if "sequence" not in columns:  # states written before lists carried a sequence: their lists count as 0
            self.db.execute("ALTER TABLE status_lists ADD COLUMN sequence INTEGER NOT NULL DEFAULT 0")

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the SQLite connection; the context manager calls this on exit."""
        self.db.close()

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
        """Marks it revoked, returning (list UUID, index); UsageError if it was not issued from this state."""
        row = self.db.execute("SELECT list_uuid, idx FROM status_entries WHERE credential_id = ?",
                              (credential_id,)).fetchone()
        if row is None:
            raise UsageError(f"ledger: no credential {credential_id} was issued from this state")
        self.db.execute("UPDATE status_entries SET revoked_at = COALESCE(revoked_at, ?), reason = ? "
                        "WHERE credential_id = ?", (_ts(now), reason, credential_id))
        return str(row[0]), int(row[1])

    def revoked_indices(self, list_uuid: str) -> list[int]:
        """The revoked indices of the list, ascending: the bits to set when the list is re-signed."""
        return [r[0] for r in self.db.execute(
            "SELECT idx FROM status_entries WHERE list_uuid = ? AND revoked_at IS NOT NULL ORDER BY idx", (list_uuid,))]

    def entries(self, list_uuid: str) -> list[dict[str, Any]]:
        """Every allocated entry of the list, oldest first, as plain dicts of the row."""
        return [dict(r) for r in self.db.execute(
            "SELECT * FROM status_entries WHERE list_uuid = ? ORDER BY allocated_at", (list_uuid,))]

    def record_publication(self, list_uuid: str, location: str, digest: str | None, now: datetime) -> None:
        """Records where a list was published (one row per location), so revoke and refresh republish there."""
        self.db.execute("INSERT INTO publications (list_uuid, location, digest, published_at) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT (list_uuid, location) DO UPDATE SET digest = excluded.digest, "
                        "published_at = excluded.published_at", (list_uuid, location, digest, _ts(now)))

    def publications(self, list_uuid: str) -> list[dict[str, Any]]:
        """The locations that the list was published to, with the digest last written to each."""
        return [dict(r) for r in self.db.execute(
            "SELECT location, digest, published_at FROM publications WHERE list_uuid = ? ORDER BY location",
            (list_uuid,))]

    # --- what was issued, so ``revoke`` can be given any of its names ---------------------------------

    def record_credential(self, credential_id: str, credential_digest: str, now: datetime,
                          attestation_digest: str | None = None, attestation_ref: str | None = None) -> None:
        """Records an issued credential's names so ``revoke`` accepts any; re-recording keeps known digests."""
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
        """The list with this UUID; raises UsageError when this state never created it."""
        row = self.db.execute("SELECT * FROM status_lists WHERE uuid = ?", (list_uuid,)).fetchone()
        if row is None:
            raise UsageError(f"ledger: unknown status list {list_uuid}")
        return StatusList(row["uuid"], row["url"], _dt(row["created_at"]), row["size"], row["purpose"])

    def status_list_uuids(self) -> list[str]:
        """Every list in this state, oldest first (what ``refresh`` re-signs)."""
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
        """The UUID of the list holding the credential's entry; None when none was allocated."""
        row = self.db.execute("SELECT list_uuid FROM status_entries WHERE credential_id = ?",
                              (credential_id,)).fetchone()
        return str(row[0]) if row is not None else None
