"""Where a resolution's time goes: per phase (fetch, parse, verify, replay, status) seconds and counts.

A user who hits a limit sees which phase spent it: ``resolve --json`` prints :meth:`Phases.to_json` as
``phases``, the gateway logs it at debug level. Seconds are wall time on the resolving thread, except
``parse``, which is summed over the fetch workers (it overlaps ``fetch``); ``fetch`` excludes the status
lists fetched while attestations arrive, ``verify`` excludes the replays it asked for. ``blobs`` counts every
object fetched (attestation manifests too); ``status`` counts a list's manifest and layer but not its bytes
(the store hands back the parsed list). Signatures are the
Ed25519 verifications made in the phase (:func:`acx_oci.crypto.keys.counting_verifications`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from acx_oci.crypto import counting_verifications

NAMES = ("fetch", "parse", "verify", "replay", "status")


@dataclass
class Phase:
    """One phase's totals."""

    seconds: float = 0.0
    blobs: int = 0
    bytes: int = 0
    signatures: int = 0


class Phases:
    """The phases of one resolution (counts may be added from worker threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_name = {name: Phase() for name in NAMES}

    def count(self, name: str, blobs: int = 0, nbytes: int = 0, seconds: float = 0.0) -> None:
        """Add fetched blobs, bytes and (worker) seconds to a phase."""
        with self._lock:
            phase = self.by_name[name]
            phase.blobs += blobs
            phase.bytes += nbytes
            phase.seconds += seconds

    @contextmanager
    def timed(self, name: str, *, less: tuple[str, ...] = ()) -> Iterator[Phase]:
        """Time the block into ``name`` and count its signature verifications; time spent meanwhile in the
        ``less`` phases (nested inside the block) is not counted twice."""
        phase = self.by_name[name]
        before = {n: self.by_name[n].seconds for n in less}
        start = time.perf_counter()
        with counting_verifications() as counter:
            try:
                yield phase
            finally:
                nested = sum(self.by_name[n].seconds - before[n] for n in less)
                with self._lock:
                    phase.seconds += time.perf_counter() - start - nested
                    phase.signatures += counter[0]

    def to_json(self) -> dict[str, Any]:
        """``{phase: {seconds, blobs, bytes, signatures}}``."""
        with self._lock:
            return {name: {"seconds": round(p.seconds, 4), "blobs": p.blobs, "bytes": p.bytes,
                           "signatures": p.signatures} for name, p in self.by_name.items()}
