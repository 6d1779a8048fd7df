"""The log as OCI artifacts in a repository the verifier names, and the consumer's reader of it.

Layout (artifact type ``application/vnd.acx.transparency-log.v1``):

- per publication, a manifest tagged ``tiles-<size>`` whose layers are the tiles and entry
  bundles that size added (content-addressed blobs, annotation ``org.acx.tlog.path`` = the
  tile path); the tag keeps them from garbage collection;
- the manifest tagged ``checkpoint``, pushed last: layer 0 the checkpoint note with its
  cosignatures, layer 1 the *tile index*, a canonical JSON ``{"size", "tiles": {path: digest}}``
  of every tile and bundle of that size.

A consumer so reaches any tile in O(1) requests: the tag, the note and the index once (3
requests), then one blob GET per tile. The index grows by one entry per 256 leaves (81
entries, 7.3 KB, at 10,000 entries, as benchmarks/log.py measures; about 0.7 MB at a million):
cheaper than a tag per tile (a manifest GET *and* a blob GET per tile, and a registry tag list
of n/256 tags) and than an index of indexes until logs of many millions. Nothing
in the index is trusted: every tile read goes into a proof checked against the signed root.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from acx_oci.errors import LogError
from acx_oci.jsonio import parse_json
from acx_oci.oci import Store
from acx_oci.tlog import (
    HASH_SIZE,
    MAX_NOTE,
    TILE_WIDTH,
    Checkpoint,
    Cosigned,
    Cosigner,
    Verifier,
    leaf_hash,
    parse,
    parse_checkpoint_text,
    parse_tile_path,
    prove_inclusion,
    verify_cosigned,
)

ARTIFACT_LOG = "application/vnd.acx.transparency-log.v1"
MEDIA_TILE = "application/vnd.acx.tlog.tile.v1"
MEDIA_ENTRIES = "application/vnd.acx.tlog.entries.v1"
MEDIA_CHECKPOINT = "application/vnd.acx.tlog.checkpoint.v1"
MEDIA_TILE_INDEX = "application/vnd.acx.tlog.index.v1+json"
ANNOTATION_PATH = "org.acx.tlog.path"
ANNOTATION_SIZE = "org.acx.tlog.size"
ANNOTATION_ORIGIN = "org.acx.tlog.origin"
ANNOTATION_VKEY = "org.acx.tlog.vkey"
CHECKPOINT_TAG = "checkpoint"
MAX_INDEX = 64 * 1024 * 1024
MAX_BUNDLE = TILE_WIDTH * (2 + 0xFFFF)
CHECKPOINT = "checkpoint"


@dataclass
class LogHead:
    """What the ``checkpoint`` tag serves: the note (unverified until :meth:`LogReader.verify`), index, vkey."""

    note: bytes
    checkpoint: Checkpoint
    index: dict[str, str]
    vkey: str | None


def _parse_index(raw: bytes, size: int, what: str) -> dict[str, str]:
    doc = parse_json(raw, what)
    tiles = doc.get("tiles") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("size") != size or not isinstance(tiles, dict):
        raise LogError(f"{what}: not the tile index of a log of size {size}")
    for path, digest in tiles.items():
        try:
            parse_tile_path(path)
        except ValueError:
            raise LogError(f"{what}: {path[:80]!r} is not a tile path") from None
        if not isinstance(digest, str) or not digest.startswith("sha256:") or len(digest) != 71:
            raise LogError(f"{what}: {path}: not a sha256 digest")
    return dict(tiles)


class LogReader:
    """A consumer's view of a published log: only registry reads, every tile checked by a proof.

    ``tile_fetches`` counts tile and bundle GETs (the proofs' cost); ``head()`` costs three
    requests more (the tag's manifest, the note, the index), once per reader.
    """

    def __init__(self, store: Store) -> None:
        """A reader of the log in ``store``'s repository (a registry repository or an ``oci:`` layout)."""
        self.store = store
        self.tile_fetches = 0
        self._head: LogHead | None = None

    def head(self) -> LogHead:
        """The served checkpoint note and tile index (fetched once)."""
        if self._head is None:
            where = f"{self.store.reference}:{CHECKPOINT_TAG}"
            manifest = self.store.fetch_manifest(CHECKPOINT_TAG)
            if manifest.artifact_type != ARTIFACT_LOG or len(manifest.layers) != 2:
                raise LogError(f"{where}: not a transparency-log checkpoint ({manifest.artifact_type})")
            note_d, idx_d = manifest.layers
            if note_d.media_type != MEDIA_CHECKPOINT or idx_d.media_type != MEDIA_TILE_INDEX:
                raise LogError(f"{where}: expected a checkpoint layer and a tile index layer")
            note = self.store.fetch_blob(note_d.digest, MAX_NOTE, size=note_d.size)
            cp = parse_checkpoint_text(parse(note).text)
            index = _parse_index(self.store.fetch_blob(idx_d.digest, MAX_INDEX, size=idx_d.size), cp.size,
                                 f"{where} tile index")
            self._head = LogHead(note, cp, index, manifest.annotations.get(ANNOTATION_VKEY))
        return self._head

    def fetch(self, path: str) -> bytes:
        """A tile or bundle by its tlog-tiles path (a :data:`~acx_oci.tlog.tiles.TileFetch`), via the index."""
        digest = self.head().index.get(path)
        if digest is None:
            raise LogError(f"{path}: not in the log's tile index")
        tile = parse_tile_path(path)
        limit = MAX_BUNDLE if tile.level == -1 else tile.width * HASH_SIZE
        self.tile_fetches += 1
        return self.store.fetch_blob(digest, limit)

    def verify(self, log: Verifier, witnesses: list[Cosigner] | None = None, quorum: int = 0) -> Cosigned:
        """The served checkpoint, checked: signed by ``log``, cosigned by ``quorum`` of ``witnesses`` (none dated
        more than a day ahead of this machine's clock)."""
        return verify_cosigned(self.head().note, log, witnesses or [], quorum, now=int(time.time()))

    def prove(self, index: int, entry: bytes, checkpoint: Checkpoint) -> tuple[list[bytes], int]:
        """Prove entry ``index`` is ``entry`` in the (verified) ``checkpoint``; (proof, tile fetches it cost)."""
        return prove_inclusion(index, leaf_hash(entry), checkpoint.size, checkpoint.root, self.fetch)
