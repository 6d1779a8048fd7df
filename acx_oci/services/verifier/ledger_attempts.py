"""The attempts half of the verifier's ledger: who tried what, when, and what each try counts for.

An attempt counts when its verdict exists, not when it is published: a run that played its first game
starts the cooldown and takes its place in the attempt history whatever happens afterwards (a registry
that vetoes the push, a Ctrl-C). The cooldown applies per (ROM digest, benchmark digest) and, unless the
scope is ``rom``, per (cartridge id, benchmark digest, capability) across ROM digests, so a one-byte
respin does not buy a new try. Mixed into :class:`acx_oci.services.verifier.ledger.Ledger` (it owns ``db``).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from acx_oci import reasons as rc
from acx_oci.errors import UsageError
from acx_oci.model import SCOPE_PUBLISHER, SCOPE_ROM, AttemptCount, new_attempt_id, version_key

# Columns added after the first ledgers were written: an old state is migrated in place.
NEW_COLUMNS = (("publication", "TEXT"), ("cartridge_id", "TEXT"), ("capability_id", "TEXT"),
               ("cooldown_scope", "TEXT"), ("run_dir", "TEXT"), ("publisher_key", "TEXT"), ("attempt_uid", "TEXT"),
               ("cartridge_version", "TEXT"))
# States that played (or were stopped after their first game): they count in the history.
_PLAYED = "(state IN ('issued', 'not-issued') OR (state = 'aborted' AND starts_cooldown = 1))"


def ts(dt: datetime) -> str:
    """The one timestamp form the ledger stores (UTC, microseconds)."""
    if dt.tzinfo is None:
        raise UsageError("ledger: timestamps must be timezone-aware")
    return dt.astimezone(UTC).isoformat(timespec="microseconds")


def migrate(db: sqlite3.Connection) -> None:
    """Add the attempt columns a ledger from an older version lacks, and the index the claim cooldown uses."""
    have = {r[1] for r in db.execute("PRAGMA table_info(attempts)")}
    for name, kind in NEW_COLUMNS:
        if name not in have:
            db.execute(f"ALTER TABLE attempts ADD COLUMN {name} {kind}")
    db.execute("CREATE INDEX IF NOT EXISTS attempts_claim ON attempts "
               "(cartridge_id, benchmark_digest, capability_id, started_at)")
    db.execute("CREATE INDEX IF NOT EXISTS attempts_publisher ON attempts "
               "(publisher_key, benchmark_digest, capability_id, started_at)")


@dataclass(frozen=True)
class Subject:
    """What an attempt is filed under."""

    cartridge_ref: str
    cartridge_manifest_digest: str
    rom_digest: str
    benchmark_id: str
    benchmark_version: str
    benchmark_digest: str
    issuer: str
    solver: dict[str, Any]
    cartridge_id: str | None = None  # None in a ledger row from before the claim cooldown
    capability_id: str | None = None
    publisher_key: str | None = None  # did:key of the key the ROM signature verified with (None: not kept then)
    cartridge_version: str | None = None  # the cartridge's own version (None in a row from before it was kept)


@dataclass(frozen=True, kw_only=True)
class Attempt(Subject):
    """One row of the attempts table: the subject it was filed under, and how it went."""

    id: int
    started_at: datetime
    finished_at: datetime | None
    state: str
    starts_cooldown: bool
    reasons: list[str]
    mu: float | None
    sigma: float | None
    games: int | None
    acx_level: int | None
    credential_id: str | None
    # None: nothing to publish; "pending": signed, not yet (fully) pushed - the attempt counts all the same;
    # "published": pushed.
    publication: str | None = None
    cooldown_scope: str | None = None
    run_dir: str | None = None  # the folder with the signed result (attest --publish DIR)
    attempt_uid: str | None = None  # random 128-bit id signed into the record: unique whatever state issued it

    def to_json(self) -> dict[str, Any]:
        """The row as ``ledger --json`` style JSON."""
        return {
            "id": self.id, "startedAt": self.started_at.isoformat(),
            "finishedAt": self.finished_at.isoformat() if self.finished_at else None,
            "cartridgeRef": self.cartridge_ref, "cartridgeManifestDigest": self.cartridge_manifest_digest,
            "romDigest": self.rom_digest, "benchmarkId": self.benchmark_id,
            "benchmarkVersion": self.benchmark_version, "benchmarkDigest": self.benchmark_digest,
            "issuer": self.issuer, "solver": self.solver, "state": self.state, "reasons": self.reasons,
            "mu": self.mu, "sigma": self.sigma, "games": self.games, "acxLevel": self.acx_level,
            "credentialId": self.credential_id, "publication": self.publication, "cartridgeId": self.cartridge_id,
            "capabilityId": self.capability_id, "cooldownScope": self.cooldown_scope, "runDir": self.run_dir,
            "publisher": self.publisher_key, "attemptId": self.attempt_uid,
        }


def attempt_row(row: sqlite3.Row) -> Attempt:
    """An :class:`Attempt` from a ``SELECT *`` row."""
    keys = set(row.keys())
    opt = {k: row[k] for k in ("publication", "cartridge_id", "capability_id", "cooldown_scope", "run_dir",
                                          "publisher_key", "attempt_uid", "cartridge_version")
           if k in keys}
    return Attempt(
        id=row["id"], started_at=datetime.fromisoformat(row["started_at"]),
        finished_at=datetime.fromisoformat(row["finished_at"]) if row["finished_at"] else None,
        cartridge_ref=row["cartridge_ref"], cartridge_manifest_digest=row["cartridge_manifest_digest"],
        rom_digest=row["rom_digest"], benchmark_id=row["benchmark_id"], benchmark_version=row["benchmark_version"],
        benchmark_digest=row["benchmark_digest"], issuer=row["issuer"], solver=json.loads(row["solver"]),
        state=row["state"], starts_cooldown=bool(row["starts_cooldown"]), reasons=json.loads(row["reasons"]),
        mu=row["mu"], sigma=row["sigma"], games=row["games"], acx_level=row["acx_level"],
        credential_id=row["credential_id"], **opt)


@dataclass(frozen=True)
class CooldownRefusal:
    """Why a new run may not start yet, and when it may."""

    previous: Attempt
    until: datetime
    same_rom: bool  # False: the same cartridge's claim on another ROM (a respin)
    cartridge_id: str | None = None  # the refused run's cartridge id (another one: the publisher scope refused it)

    def reason(self) -> str:
        """One line, starting with the reason code, naming the earlier attempt."""
        p = self.previous
        if self.same_rom:
            what = "on this ROM and benchmark"
        elif self.cartridge_id is not None and p.cartridge_id != self.cartridge_id:
            what = (f"by the same publisher key {p.publisher_key} on {p.capability_id} and this benchmark (cartridge "
                    f"{p.cartridge_id}, ROM {p.rom_digest}; --cooldown-scope publisher)")
        else:
            what = (f"on cartridge {p.cartridge_id}'s claim to {p.capability_id} on this benchmark "
                    f"(ROM {p.rom_digest}; a respin shares the cooldown, --cooldown-scope rom to limit it to one ROM)")
        return (f"{rc.COOLDOWN}: attempt {p.id}{f' ({p.attempt_uid})' if p.attempt_uid else ''} {what} started "
                f"{p.started_at.isoformat(timespec='seconds')} ({p.state}); next attempt allowed after "
                f"{self.until.isoformat(timespec='seconds')}")


class AttemptsMixin:
    """The attempt methods of the ledger."""

    db: sqlite3.Connection

    def cooldown_refusal(self, subject: Subject, now: datetime, cooldown: timedelta,
                         scope: str = "rom+claim") -> CooldownRefusal | None:
        """The latest attempt whose cooldown still runs for this ROM (or, scope rom+claim, this claim)."""
        if cooldown <= timedelta(0):
            return None
        claim = scope != SCOPE_ROM and subject.cartridge_id is not None and subject.capability_id is not None
        publisher = scope == SCOPE_PUBLISHER and subject.publisher_key is not None and subject.capability_id is not None
        row = self.db.execute(
            "SELECT * FROM attempts WHERE starts_cooldown = 1 AND benchmark_digest = ? AND (rom_digest = ? OR "
            "(? AND cartridge_id = ? AND capability_id = ?) OR (? AND publisher_key = ? AND capability_id = ?)) "
            "ORDER BY started_at DESC, id DESC LIMIT 1",
            (subject.benchmark_digest, subject.rom_digest, 1 if claim else 0, subject.cartridge_id,
             subject.capability_id, 1 if publisher else 0, subject.publisher_key, subject.capability_id)).fetchone()
        if row is None:
            return None
        prev = attempt_row(row)
        until = prev.started_at + cooldown
        return CooldownRefusal(prev, until, prev.rom_digest == subject.rom_digest, subject.cartridge_id) \
            if now < until else None

    def begin_attempt(self, subject: Subject, *, now: datetime, cooldown: timedelta,
                      scope: str = "rom+claim") -> tuple[int, CooldownRefusal | None]:
        """Atomically check the cooldown and log the attempt: ``running`` (starts a cooldown) or ``refused``."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            refusal = self.cooldown_refusal(subject, now, cooldown, scope)
            attempt_id = self._insert(subject, now, "refused" if refusal else "running", not refusal,
                                      [refusal.reason()] if refusal else [], scope)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return attempt_id, refusal

    def log_refusal(self, subject: Subject, *, now: datetime, reasons: list[str]) -> int:
        """A refusal before running (bad signature, capability mismatch...): logged, no cooldown."""
        return self._insert(subject, now, "refused", False, reasons, None)

    def _insert(self, s: Subject, now: datetime, state: str, cooldown: bool, reasons: list[str],
                scope: str | None) -> int:
        cur = self.db.execute(
            "INSERT INTO attempts (started_at, finished_at, cartridge_ref, cartridge_manifest_digest, rom_digest,"
            " benchmark_id, benchmark_version, benchmark_digest, issuer, solver, state, starts_cooldown, reasons,"
            " cartridge_id, capability_id, cooldown_scope, publisher_key, attempt_uid, cartridge_version)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (ts(now), ts(now) if state == "refused" else None, s.cartridge_ref, s.cartridge_manifest_digest,
             s.rom_digest, s.benchmark_id, s.benchmark_version, s.benchmark_digest, s.issuer,
             json.dumps(s.solver, sort_keys=True), state, 1 if cooldown else 0, json.dumps(reasons), s.cartridge_id,
             s.capability_id, scope, s.publisher_key, new_attempt_id(), s.cartridge_version))
        return int(cur.lastrowid or 0)

    def finish_attempt(self, attempt_id: int, *, now: datetime, issued: bool, reasons: list[str],
                       mu: float | None = None, sigma: float | None = None, games: int | None = None,
                       acx_level: int | None = None, credential_id: str | None = None,
                       aborted: bool = False, starts_cooldown: bool = True, run_dir: str | None = None,
                       refused: bool = False) -> None:
        """``starts_cooldown=False`` only for a run stopped before its first game: that was no attempt.
        ``refused``: a run the plan refused before any game (too few post-cutoff exams): no attempt, no cooldown."""
        state = "refused" if refused else "aborted" if aborted else "issued" if issued else "not-issued"
        starts_cooldown = starts_cooldown and not refused
        self.db.execute(
            "UPDATE attempts SET finished_at = ?, state = ?, reasons = ?, mu = ?, sigma = ?, games = ?,"
            " acx_level = ?, credential_id = ?, starts_cooldown = ?, run_dir = COALESCE(?, run_dir) WHERE id = ?",
            (ts(now), state, json.dumps(reasons), mu, sigma, games, acx_level, credential_id,
             1 if starts_cooldown else 0, run_dir, attempt_id))

    def set_publication(self, attempt_id: int, publication: str) -> None:
        """``pending`` or ``published``: the cooldown is not touched - a result the registry refused still counts."""
        self.db.execute("UPDATE attempts SET publication = ? WHERE id = ?", (publication, attempt_id))

    def attempt(self, attempt_id: int) -> Attempt | None:
        """The attempt with this id."""
        row = self.db.execute("SELECT * FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
        return attempt_row(row) if row is not None else None

    def attempt_of_credential(self, credential_id: str) -> Attempt | None:
        """The attempt that issued this credential."""
        row = self.db.execute("SELECT * FROM attempts WHERE credential_id = ?", (credential_id,)).fetchone()
        return attempt_row(row) if row is not None else None

    def attempt_count(self, attempt_id: int) -> AttemptCount:
        """``acx:attempt`` for an attempt: its place among the played attempts on its claim with this issuer."""
        me = self.attempt(attempt_id)
        if me is None:
            raise UsageError(f"ledger: no attempt {attempt_id}")
        rows = self.db.execute(
            f"SELECT started_at FROM attempts WHERE id < ? AND issuer = ? AND benchmark_digest = ? AND {_PLAYED} "
            "AND (rom_digest = ? OR cartridge_id = ? AND capability_id = ?) ORDER BY started_at",
            (me.id, me.issuer, me.benchmark_digest, me.rom_digest, me.cartridge_id, me.capability_id)).fetchall()
        first = datetime.fromisoformat(rows[0][0]) if rows else me.started_at
        pub_seq, pub_first = None, None
        if me.publisher_key is not None and me.capability_id is not None:
            prows = self.db.execute(
                f"SELECT started_at FROM attempts WHERE id < ? AND issuer = ? AND benchmark_digest = ? AND {_PLAYED} "
                "AND publisher_key = ? AND capability_id = ? ORDER BY started_at",
                (me.id, me.issuer, me.benchmark_digest, me.publisher_key, me.capability_id)).fetchall()
            pub_seq = len(prows) + 1
            pub_first = min(datetime.fromisoformat(prows[0][0]) if prows else me.started_at, me.started_at)
        return AttemptCount(len(rows) + 1, len(rows), min(first, me.started_at), me.attempt_uid, me.publisher_key,
                            pub_seq, pub_first)

    def superseded_credentials(self, attempt_id: int) -> list[str]:
        """Unrevoked credentials this issuer issued earlier for the same ROM, benchmark and capability."""
        me = self.attempt(attempt_id)
        if me is None:
            raise UsageError(f"ledger: no attempt {attempt_id}")
        rows = self.db.execute(
            "SELECT a.credential_id FROM attempts a JOIN status_entries e ON e.credential_id = a.credential_id "
            "WHERE a.id <> ? AND a.issuer = ? AND a.rom_digest = ? AND a.benchmark_digest = ? AND "
            "a.state = 'issued' AND (a.capability_id IS NULL OR ? IS NULL OR a.capability_id = ?) AND "
            "e.revoked_at IS NULL ORDER BY a.id",
            (me.id, me.issuer, me.rom_digest, me.benchmark_digest, me.capability_id, me.capability_id)).fetchall()
        return [str(r[0]) for r in rows]

    def attempts(self, rom_digest: str | None = None) -> list[Attempt]:
        """Every attempt (on one ROM), oldest first."""
        if rom_digest is None:
            rows = self.db.execute("SELECT * FROM attempts ORDER BY id").fetchall()
        else:
            rows = self.db.execute("SELECT * FROM attempts WHERE rom_digest = ? ORDER BY id", (rom_digest,)).fetchall()
        return [attempt_row(r) for r in rows]

    def predecessor(self, subject: Subject) -> tuple[Attempt | None, str]:
        """The level a new version is compared with (issue 44.1): of this issuer's issued, unrevoked levels on
        the same cartridge id, capability and benchmark, on another ROM and played by the same kind of solver,
        the one with the highest version not above the new one (the newest of equal versions: a respin is
        compared). A new ROM whose version string is below every level's is compared with the highest of them
        (declaring a low version dodges nothing); a ROM that has a level of its own (an older version attested
        again) has no baseline.
        Versions the ledger does not know (rows from before it kept them) go by issuance, newest first.
        The second value says which: ``ledger`` (found), ``none`` or ``own-level`` (acx:previousVersion)."""
        if subject.cartridge_id is None or subject.capability_id is None:
            return None, "none"
        rows = self.db.execute(
            "SELECT a.* FROM attempts a WHERE a.state = 'issued' AND a.credential_id IS NOT NULL AND a.issuer = ?"
            " AND a.cartridge_id = ? AND a.capability_id = ? AND a.benchmark_id = ? AND a.benchmark_version = ?"
            " AND a.rom_digest != ? AND NOT EXISTS (SELECT 1 FROM status_entries s WHERE s.credential_id ="
            " a.credential_id AND s.revoked_at IS NOT NULL) ORDER BY a.started_at DESC, a.id DESC",
            (subject.issuer, subject.cartridge_id, subject.capability_id, subject.benchmark_id,
             subject.benchmark_version, subject.rom_digest)).fetchall()
        kind = subject.solver.get("name")
        found = [a for a in map(attempt_row, rows) if a.solver.get("name") == kind]
        new = version_key(subject.cartridge_version)
        known = [(version_key(a.cartridge_version), a) for a in found]
        if not found:
            return None, "none"
        if new is None or any(k is None for k, _ in known):
            return found[0], "ledger"
        below = [(k, a) for k, a in known if k is not None and k <= new]
        if below:  # rows are newest first: max() keeps the first of equal versions
            return max(below, key=lambda ka: ka[0])[1], "ledger"
        if self._rom_has_level(subject):
            return None, "own-level"
        return max(known, key=lambda ka: ka[0] or ())[1], "ledger"

    def _rom_has_level(self, subject: Subject) -> bool:
        """Whether this issuer issued this very ROM an unrevoked level on this benchmark before."""
        return self.db.execute(
            "SELECT 1 FROM attempts a WHERE a.state = 'issued' AND a.issuer = ? AND a.rom_digest = ? AND"
            " a.benchmark_id = ? AND a.benchmark_version = ? AND NOT EXISTS (SELECT 1 FROM status_entries s WHERE"
            " s.credential_id = a.credential_id AND s.revoked_at IS NOT NULL) LIMIT 1",
            (subject.issuer, subject.rom_digest, subject.benchmark_id, subject.benchmark_version)).fetchone() \
            is not None
