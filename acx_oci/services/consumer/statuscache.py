"""What a consumer remembers about status lists: the highest ``acx:sequence`` seen per list, and the newest
list itself that verified (SQLite).

A list put back by whoever controls a repository is an older list, signed by
the verifier and so still verifying; its sequence is lower than one this
consumer has already seen, and :mod:`acx_oci.evaluation.status_check` refuses
it (``status_rollback``) when given that sequence as ``min_sequence``.

Entries are keyed by list URL *and* the list's issuer: a sequence is recorded
only from a list whose proof verified as its issuer's, so a stranger's list at
the same URL cannot raise (and so jam) the mark kept for the real issuer.

The newest list is kept whole (issue 34, design (a)): one verifier keeps one
list and republishes it only into the repository it just attested into, so
every other repository holds an older copy. The consumer judges by the newest
list it holds, so an older copy elsewhere is stale, not an error, and a
revoked bit, once seen, is never cleared by an older copy.

Where: ``--status-cache DIR``, else ``$ACX_OCI_CACHE_DIR``, else
``$XDG_CACHE_HOME/acx-oci``, else ``~/.cache/acx-oci``; the file is
``status.sqlite``. Each call opens its own short connection, so one instance
may be shared by threads (the gateway resolves in worker threads).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acx_oci.errors import UsageError

CACHE_ENV = "ACX_OCI_CACHE_DIR"
DB_FILE = "status.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS status_sequences (
    list_url TEXT NOT NULL,
    issuer TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (list_url, issuer)
);
CREATE TABLE IF NOT EXISTS status_lists (
    list_url TEXT NOT NULL,
    issuer TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    document TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (list_url, issuer)
);
"""


def default_cache_dir() -> Path:
    """``$ACX_OCI_CACHE_DIR``, else ``$XDG_CACHE_HOME/acx-oci``, else ``~/.cache/acx-oci``."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "acx-oci"


class SqliteCache:
    """One SQLite file in the consumer cache directory, its tables made on first use (the status and log
    histories share this: a cache that cannot be opened is one line naming the file and the way out)."""

    db_file = DB_FILE
    schema = _SCHEMA
    what = "status cache"

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else default_cache_dir()
        self.path = self.directory / self.db_file
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.executescript(self.schema)
        except (OSError, sqlite3.Error) as exc:
            raise UsageError(f"{self.what} {self.path}: cannot open it ({exc}); choose another directory with "
                             f"--status-cache DIR or ${CACHE_ENV}") from None

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """One short connection: committed on success, rolled back on error, always closed."""
        db = sqlite3.connect(self.path, timeout=30)
        try:
            with db:
                db.execute("PRAGMA journal_mode=WAL")
                yield db
        finally:
            db.close()

    def _run(self, sql: str, params: tuple[Any, ...]) -> Any:
        """Run one statement in its own connection; its first row (None without one). A failure is one line
        naming the file (the cache is the consumer's: a damaged one must not read as a verdict)."""
        try:
            with self._connect() as db:
                return db.execute(sql, params).fetchone()
        except sqlite3.Error as exc:
            raise UsageError(f"{self.what} {self.path}: {exc}") from None

    def _raise_mark(self, table: str, keys: dict[str, Any], mark: str, values: dict[str, Any],
                    now: datetime | None, *, replace_equal: bool = False) -> None:
        """Upsert the row ``keys`` name with ``values`` and a ``seen_at`` stamp, unless the kept row's ``mark``
        is higher (or equal, without ``replace_equal``): every cache table's "never lower the mark" write."""
        row = {**keys, **values, "seen_at": (now or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds")}
        updates = ", ".join(f"{c} = excluded.{c}" for c in row if c not in keys)
        self._run(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))}) "
                  f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {updates} "
                  f"WHERE excluded.{mark} {'>=' if replace_equal else '>'} {table}.{mark}", tuple(row.values()))


class StatusHistory(SqliteCache):
    """The highest sequence seen per (list URL, issuer), persisted in ``DIR/status.sqlite``."""

    def highest(self, list_url: str, issuer: str) -> int:
        """The highest sequence seen for this list from this issuer; 0 with no history."""
        row = self._run("SELECT sequence FROM status_sequences WHERE list_url = ? AND issuer = ?", (list_url, issuer))
        return int(row[0]) if row is not None else 0

    def remember(self, list_url: str, issuer: str, sequence: int, now: datetime | None = None) -> None:
        """Record ``sequence`` unless a higher one is already known (never lowers the mark)."""
        self._raise_mark("status_sequences", {"list_url": list_url, "issuer": issuer}, "sequence",
                         {"sequence": sequence}, now)

    def newest(self, list_url: str, issuer: str) -> dict[str, Any] | None:
        """The newest list of this URL that verified as ``issuer``'s here; None when none is kept (or unreadable)."""
        row = self._run("SELECT document FROM status_lists WHERE list_url = ? AND issuer = ?", (list_url, issuer))
        if row is None:
            return None
        try:
            doc = json.loads(row[0])
        except ValueError:
            return None  # a damaged row is no evidence: the lists found are judged on their own
        return doc if isinstance(doc, dict) else None

    def keep(self, list_url: str, issuer: str, sequence: int, document: dict[str, Any],
             now: datetime | None = None) -> None:
        """Keep ``document`` (a list that verified as ``issuer``'s) unless a newer one is kept; raise the mark."""
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
        self._raise_mark("status_lists", {"list_url": list_url, "issuer": issuer}, "sequence",
                         {"sequence": sequence, "document": text}, now, replace_equal=True)
        self.remember(list_url, issuer, sequence, now)
