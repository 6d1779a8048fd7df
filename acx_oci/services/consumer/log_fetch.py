"""Fetching what the log check decides on: each pinned log's head, consistency proofs, and its history.

Once per resolution per log (never per credential): the ``checkpoint`` tag of the log's repository
(:class:`~acx_oci.services.artifacts.log_reader.LogReader`), then from the head's tiles the consistency
proofs from the newest checkpoint this consumer remembers and from each proof's checkpoint, and the
entries from the oldest logged credential to the head (for superseding by log order). Every entry
read is bound to the head's root here: a bundle's leaf hashes must be its level-0 tile, and an
inclusion proof of the tile's first leaf (whose path is that tile's hashes) must lead to the root.
Nothing is trusted until :mod:`acx_oci.evaluation.log_check` verified the head's signatures.
Bounded: at most :data:`MAX_LOGS` logs and :data:`MAX_HISTORY_BUNDLES` entry bundles, the
resolution's deadline, and each blob by the reader's size caps.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from acx_oci.errors import AcxError, LogError
from acx_oci.evaluation import LogKeys, LogView, Material, head_status
from acx_oci.model import issuer_id
from acx_oci.oci import Store, open_store
from acx_oci.services.artifacts import LogReader, parse_entry
from acx_oci.services.consumer.logcache import LogHistory
from acx_oci.timeutil import Deadline
from acx_oci.tlog import (
    TILE_WIDTH,
    Tile,
    TileReader,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    parse,
    parse_checkpoint_text,
    parse_entry_bundle,
    parse_proof,
    verify_inclusion,
)
from acx_oci.trust import Trust

MAX_LOGS = 16
MAX_HISTORY_BUNDLES = 256  # 65,536 entries after the oldest logged credential
MAX_HISTORY_BYTES = 64 * 1024 * 1024  # of entry bundles per log and resolution (a bundle may be 16 MiB)
LogOpener = Callable[[str], Store]


@dataclass
class _Wanted:
    """What one log must answer for this resolution: the proofs' checkpoint sizes and the oldest entry."""

    keys: LogKeys
    sizes: set[int] = field(default_factory=set)
    first: int | None = None


@dataclass(frozen=True)
class LogsFetched:
    """Per origin, the view the judge decides on and the parsed keys; notes on bounds and failures."""

    views: Mapping[str, LogView]
    keys: Mapping[str, LogKeys]
    notes: tuple[str, ...] = ()


def _wanted(material: Material, trust: Trust) -> dict[str, _Wanted]:
    out: dict[str, _Wanted] = {}
    for item in material.attestations:
        issuer = issuer_id(item.credential) if item.credential is not None else None
        pinned = trust.log_for(issuer) if issuer else None
        if pinned is None:
            continue
        keys = material.log_keys.get(pinned.origin)  # parsed once, at the door
        if keys is None:
            continue  # never fetched: the judge's log check fails closed
        want = out.setdefault(keys.origin, _Wanted(keys))
        if item.log_proof is None:
            continue
        try:
            proof = parse_proof(item.log_proof)
            want.sizes.add(parse_checkpoint_text(parse(proof.checkpoint).text).size)
        except AcxError:
            continue  # the judge says why
        want.first = proof.index if want.first is None else min(want.first, proof.index)
    return out


def read_history(reader: LogReader, tiles: TileReader, size: int, root: bytes, first: int,
                 deadline: Deadline | None = None) -> tuple[tuple[tuple[int, dict[str, Any]], ...], int | None]:
    """The entries from ``first``'s bundle to ``size``, each bound to ``root``; (entries, first index or None).

    None when a bound was hit (too many bundles or bytes, the deadline): the history was not read to its end.
    """
    k0, last = first // TILE_WIDTH, -(-size // TILE_WIDTH)
    if last - k0 > MAX_HISTORY_BUNDLES:
        return (), None
    out: list[tuple[int, dict[str, Any]]] = []
    budget = MAX_HISTORY_BYTES
    for k in range(k0, last):
        if (deadline is not None and deadline.expired()) or budget <= 0:
            return (), None
        width = min(TILE_WIDTH, size - k * TILE_WIDTH)
        data = reader.fetch(Tile(-1, k, width).path)
        budget -= len(data)
        raw = parse_entry_bundle(data, width)
        if [leaf_hash(e) for e in raw] != tiles.tile(Tile(0, k, width)):
            raise LogError(f"entry bundle {k}: its entries do not hash to its level-0 tile")
        start = k * TILE_WIDTH
        verify_inclusion(start, size, leaf_hash(raw[0]), inclusion_proof(start, size, tiles.hash_at), root)
        for j, data in enumerate(raw):
            try:
                out.append((start + j, parse_entry(data, start + j)))
            except AcxError:
                continue  # a leaf that is no entry of ours supersedes nothing
    return tuple(out), k0 * TILE_WIDTH


def _view(reader: LogReader, want: _Wanted, remembered: bytes | None, deadline: Deadline | None) -> LogView:
    head = reader.head()
    size, root = head.checkpoint.size, head.checkpoint.root
    tiles = TileReader(size, reader.fetch)
    olds = set(want.sizes)
    if remembered is not None:
        with contextlib.suppress(AcxError):
            olds.add(parse_checkpoint_text(parse(remembered).text).size)
    proofs: dict[tuple[int, int], tuple[bytes, ...]] = {}
    for old in sorted(s for s in olds if 0 < s < size):
        try:
            proofs[(old, size)] = tuple(consistency_proof(old, size, tiles.hash_at))
        except AcxError:
            continue  # the check then finds no proof: log_inconsistent
    entries: tuple[tuple[int, dict[str, Any]], ...] = ()
    start = None
    # the whole log when it fits the bound (the attempt history), else from the oldest logged credential
    first = 0 if -(-size // TILE_WIDTH) <= MAX_HISTORY_BUNDLES else want.first
    if first is not None and first < size:
        entries, start = read_history(reader, tiles, size, root, first, deadline)
    return LogView(head.note, remembered, proofs, None, entries, start)


def gather_logs(material: Material, trust: Trust, history: LogHistory | None, deadline: Deadline | None = None,
                open_log: LogOpener | None = None) -> LogsFetched:
    """Fetch every log the trust file pins for an issuer among the fetched credentials (see the module)."""
    wanted = _wanted(material, trust)
    views: dict[str, LogView] = {}
    notes: list[str] = []
    for n, (origin, want) in enumerate(sorted(wanted.items())):
        remembered = history.newest(origin) if history is not None else None
        if n >= MAX_LOGS:
            views[origin] = LogView(remembered=remembered, error=f"more than {MAX_LOGS} logs in one resolution")
            continue
        store = (open_log or open_store)(want.keys.url)
        try:
            views[origin] = _view(LogReader(store), want, remembered, deadline)
        except (AcxError, ValueError) as exc:  # a hostile log's tiles: the view says why, the judge fails closed
            views[origin] = LogView(remembered=remembered, error=str(exc)[:300])
        finally:
            store.close()
        if views[origin].entries_from is None and views[origin].head is not None:
            notes.append(f"the history of log {origin} was not read to its end (a bound was hit): superseding "
                         "was decided by the registry's credentials only")
    return LogsFetched(views, {o: w.keys for o, w in wanted.items()}, tuple(notes))


def remember_logs(history: LogHistory | None, fetched: LogsFetched, now: datetime) -> None:
    """Remember each head that verified and extends what this consumer saw (never a fork or a shrink)."""
    if history is None:
        return
    for origin, view in fetched.views.items():
        head, verdict = head_status(fetched.keys[origin], view, int(now.timestamp()))
        if head is not None and verdict.code is None and view.head is not None:
            history.remember(origin, head.size, view.head, now)
