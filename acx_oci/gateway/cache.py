"""The verdict cache: the only state a gateway process keeps.

Verdicts are cached per (repository, manifest digest) together with a
*fingerprint*: the sorted digests of the manifest's attestation referrers and
the manifest digest of every ``acx-status-*`` status list in the repository.
A cached verdict is used

1. as is while it is younger than ``fresh_seconds`` (default 2 s) and no
   manifest ``PUT``/``DELETE`` in that repository went through *this* gateway;
2. otherwise after re-listing the fingerprint (one referrers listing, one tag
   listing and one small manifest GET per status list); an unchanged
   fingerprint keeps the verdict, a changed one (a new or removed attestation,
   a re-signed status list after ``revoke``) re-evaluates;
3. never after ``max_age_seconds`` (default 300 s): credential age, expiry and
   status-list freshness depend on the clock, so verdicts are recomputed.

Why a fingerprint and not only invalidation on PUTs: writes can reach the
upstream without passing this gateway (another replica, ``revoke`` run
against the upstream directly). The fingerprint catches those within
``fresh_seconds``; the PUT hook makes this replica's own writes visible at
once. Revocation therefore takes effect within ``fresh_seconds`` everywhere.

Replicas
--------
Nothing but that cache lives in the process: no sessions, no sticky state, no
write-ahead anything. Run N replicas behind any load balancer with the same
policy and trust files; each keeps its own cache, which is always safe
because entries are revalidated against the upstream as above. Index updates
for referrers are read-merge-write with read-back (and own tags as a
backstop), so replicas writing concurrently cannot lose an attestation.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from acx_oci.evaluation import Verdict

_VERDICT_CACHE_MAX = 10_000


@dataclass
class CacheEntry:
    """One verdict and what decides its reuse: the fingerprint, when it was evaluated (max age) and last
    checked (freshness), and the repository's generation then."""
    fingerprint: tuple[str, ...]
    verdict: Verdict
    evaluated_at: float
    checked_at: float
    generation: int


class VerdictCache:
    """Verdicts per (repository, manifest digest), revalidated by fingerprint (see module docstring)."""

    def __init__(self, fresh_seconds: float, max_age_seconds: float, max_entries: int = _VERDICT_CACHE_MAX) -> None:
        self.fresh_seconds = fresh_seconds
        self.max_age_seconds = max_age_seconds
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str], CacheEntry] = OrderedDict()
        self._generation: dict[str, int] = {}
        self._lock = threading.Lock()

    def generation(self, repository: str) -> int:
        """Writes through this gateway to ``repository`` so far: an entry from an older generation is revalidated."""
        with self._lock:
            return self._generation.get(repository, 0)

    def invalidate(self, repository: str) -> None:
        """A write went through this gateway: every verdict in the repository gets revalidated."""
        with self._lock:
            self._generation[repository] = self._generation.get(repository, 0) + 1

    def get(self, key: tuple[str, str]) -> CacheEntry | None:
        """The entry for (repository, digest), or None; marks it recently used (the caller judges its age)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def put(self, key: tuple[str, str], entry: CacheEntry) -> None:
        """Store an entry; past ``max_entries`` the least recently used ones go."""
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every verdict, so each is evaluated afresh (generations stay); the gateway itself never calls it."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
