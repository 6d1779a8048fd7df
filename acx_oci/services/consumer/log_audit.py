"""A monitor's work on a published log: check every tile, the consistency from a saved checkpoint, list entries.

``verify_log`` is what ``acx-oci log verify`` and ``log watch`` run; ``export_log`` writes the
plain tlog-tiles tree after the same full check, so a mirror never serves tiles it did not prove.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acx_oci.errors import LogInconsistent, NoteUnverified
from acx_oci.safetree import write_inside
from acx_oci.services.artifacts import CHECKPOINT, LogReader, parse_entry
from acx_oci.tlog import (
    Checkpoint,
    Cosigner,
    MemoryTree,
    Verifier,
    b64,
    leaf_hash,
    open_checkpoint,
    verifier_from_vkey,
    verify_consistency,
    verify_tiles,
)


@dataclass(frozen=True)
class LogReport:
    """What a full check found: the checkpoint, whether its key was pinned, witnesses, entries (index, JSON)."""

    checkpoint: Checkpoint
    pinned: bool
    witnesses: tuple[str, ...]
    since: int | None
    entries: list[tuple[int, dict[str, Any]]]
    tile_fetches: int

    def to_json(self, cartridge: str | None = None) -> dict[str, Any]:
        """The report as ``log verify --json`` prints it (only ``cartridge``'s entries when given)."""
        return {
            "origin": self.checkpoint.origin, "size": self.checkpoint.size, "root": b64(self.checkpoint.root),
            "keyPinned": self.pinned, "witnesses": list(self.witnesses), "consistentSince": self.since,
            "tileFetches": self.tile_fetches,
            "entries": [{"index": i, **e} for i, e in self.entries
                        if cartridge is None or e.get("cartridgeId") == cartridge],
        }


def _key(reader: LogReader, key: Verifier | None) -> tuple[Verifier, bool]:
    if key is not None:
        return key, True
    vkey = reader.head().vkey
    if vkey is None:
        raise NoteUnverified("the log names no key and none was given (--key)")
    return verifier_from_vkey(vkey), False


def check_since(saved: bytes, key: Verifier, cp: Checkpoint, leaves: MemoryTree) -> int:
    """Raise :class:`LogInconsistent` unless ``cp`` (whose tree is ``leaves``) extends the saved checkpoint."""
    old = open_checkpoint(saved, key, cp.origin)
    if old.size > cp.size:
        raise LogInconsistent(f"the log shrank: size {cp.size}, a checkpoint seen before has {old.size}")
    if old.size == cp.size and old.root != cp.root:
        raise LogInconsistent(f"two different roots for the same size {old.size}: the log forked")
    verify_consistency(old.size, cp.size, old.root, cp.root, leaves.consistency(old.size, cp.size))
    return old.size


def verify_log(reader: LogReader, key: Verifier | None = None, *, since: bytes | None = None,
               witnesses: list[Cosigner] | None = None, quorum: int = 0,
               keep: dict[str, bytes] | None = None) -> LogReport:
    """Fetch and check every tile and bundle of the served log, its signatures, and consistency from ``since``.

    Without ``key`` the log's own advertised key is used and the report says it was not pinned.
    ``keep`` collects every fetched file by path (what :func:`export_log` writes).
    """
    verifier, pinned = _key(reader, key)
    cosigned = reader.verify(verifier, witnesses, quorum)
    cp = cosigned.checkpoint

    def fetch(path: str) -> bytes:
        """The reader's fetch, keeping a copy for the export."""
        data = reader.fetch(path)
        if keep is not None:
            keep[path] = data
        return data

    raw = verify_tiles(cp.size, cp.root, fetch)
    entries = [(i, parse_entry(e, i)) for i, e in enumerate(raw)]
    old = None
    if since is not None:
        old = check_since(since, verifier, cp, MemoryTree([leaf_hash(e) for e in raw]))
    return LogReport(cp, pinned, tuple(w.name for w, _ in cosigned.witnesses), old, entries, reader.tile_fetches)


def export_log(reader: LogReader, dest: Path, key: Verifier | None = None) -> LogReport:
    """Check the log fully, then write ``checkpoint`` and every ``tile/...`` file under ``dest`` (new files only)."""
    files: dict[str, bytes] = {}
    report = verify_log(reader, key, keep=files)
    dest.mkdir(parents=True, exist_ok=True)
    write_inside(dest, CHECKPOINT, reader.head().note)
    for path in sorted(files):
        write_inside(dest, path, files[path])
    return report
