"""Which held-out tasks went to which model provider: every model call sends held-out task text out.

A suite whose held-out tasks reached a provider that may train on them (``dataUse: unknown``) is burned for
models trained after that date; the verifier's state remembers each exposure so its tooling can say so.
Kept in the ledger's own SQLite database, in a table of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from acx_oci.model import modelapi as ma
from acx_oci.services.verifier.ledger import Ledger

_SCHEMA = """
CREATE TABLE IF NOT EXISTS exposures (
  benchmark_digest TEXT NOT NULL,
  benchmark TEXT NOT NULL,
  task_id TEXT NOT NULL,
  model_id TEXT NOT NULL,
  api TEXT NOT NULL,
  provider TEXT NOT NULL,
  data_use TEXT NOT NULL,
  first_at TEXT NOT NULL,
  last_at TEXT NOT NULL,
  requests INTEGER NOT NULL,
  PRIMARY KEY (benchmark_digest, task_id, model_id, provider)
);
"""


def record(ledger: Ledger, *, benchmark_digest: str, benchmark: str, entry: ma.ModelEntry | None,
           games: Iterable[tuple[str, dict[str, Any]]], now: datetime) -> int:
    """Remember each ``(task id, record predicate)`` whose game sent requests upstream; how many were new.
    An entry that names no provider (a replay's, :data:`acx_oci.model.modelapi.NO_UPSTREAM`) sent nothing."""
    if entry is None or entry.base_url == ma.NO_UPSTREAM:
        return 0
    ledger.db.executescript(_SCHEMA)
    provider = urlsplit(entry.base_url).netloc
    at = now.isoformat(timespec="seconds")
    new = 0
    for task_id, pred in games:
        n = int((pred.get("model") or {}).get("requests") or 0)
        if n <= 0:
            continue
        cur = ledger.db.execute(
            "INSERT INTO exposures VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO UPDATE SET last_at=excluded.last_at, "
            "requests=requests+excluded.requests, data_use=CASE WHEN data_use='unknown' THEN 'unknown' "
            "ELSE excluded.data_use END RETURNING first_at",
            (benchmark_digest, benchmark, task_id, entry.id, entry.api, provider, entry.data_use, at, at, n))
        new += cur.fetchone()[0] == at
    return new


def listing(state_dir: Path, benchmark_digest: str | None = None) -> list[dict[str, Any]]:
    """Every exposure in a verifier state (optionally of one benchmark), oldest first."""
    with Ledger(state_dir) as ledger:
        ledger.db.executescript(_SCHEMA)
        rows = ledger.db.execute(
            "SELECT * FROM exposures WHERE ? IS NULL OR benchmark_digest = ? ORDER BY first_at, task_id",
            (benchmark_digest, benchmark_digest)).fetchall()
    return [{"benchmarkDigest": r["benchmark_digest"], "benchmark": r["benchmark"], "taskId": r["task_id"],
             "model": r["model_id"], "api": r["api"], "provider": r["provider"], "dataUse": r["data_use"],
             "firstSentAt": r["first_at"], "lastSentAt": r["last_at"], "requests": r["requests"]} for r in rows]
