"""What a consumer remembers about transparency logs: the newest checkpoint seen per log origin (SQLite).

A verifier that shows this consumer one history today and a shorter or forked one tomorrow is caught
only if the consumer remembers what it saw: :mod:`acx_oci.evaluation.log_check` requires the served
head to extend this checkpoint. It lives beside the status-list history (``logs.sqlite`` in the same
cache directory, ``--status-cache DIR``) and is raised only with a head that verified and extended it.
"""

from __future__ import annotations

from datetime import datetime

from acx_oci.services.consumer.statuscache import SqliteCache

DB_FILE = "logs.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS log_checkpoints (
    origin TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    note BLOB NOT NULL,
    seen_at TEXT NOT NULL
);
"""


class LogHistory(SqliteCache):
    """The newest checkpoint note seen per log origin, persisted in ``DIR/logs.sqlite``."""

    db_file = DB_FILE
    schema = _SCHEMA
    what = "log cache"

    def newest(self, origin: str) -> bytes | None:
        """The checkpoint note remembered for ``origin``; None for a log never seen."""
        row = self._run("SELECT note FROM log_checkpoints WHERE origin = ?", (origin,))
        return bytes(row[0]) if row is not None else None

    def remember(self, origin: str, size: int, note: bytes, now: datetime | None = None) -> None:
        """Keep ``note`` unless one at least as large is kept (the caller checked it extends the kept one)."""
        self._raise_mark("log_checkpoints", {"origin": origin}, "size", {"size": size, "note": note}, now)

    def forget(self, origin: str) -> None:
        """Drop what is remembered of ``origin`` (after a verifier's announced restart of its log)."""
        self._run("DELETE FROM log_checkpoints WHERE origin = ?", (origin,))
