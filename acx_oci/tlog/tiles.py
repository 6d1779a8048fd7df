"""C2SP tlog-tiles: tile paths, a tile builder, entry bundles and a proof client that only fetches tiles.

A tiled log serves its Merkle tree as static, immutable blobs (``tile/<L>/<N>[.p/<W>]``, 256
hashes of level ``8·L`` each) so a consumer proves an entry with O(log n / 8) small fetches and
any static file server (or an OCI registry holding the tiles as blobs) is a log server. The
client here never trusts a tile: every hash it reads goes into a proof that is checked against a
root from a signed checkpoint, and :func:`verify_tiles` rebuilds the whole tree from level 0 up.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from acx_oci.errors import LogError, LogInconsistent
from acx_oci.tlog.merkle import (
    HASH_SIZE,
    HashAt,
    MemoryTree,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    root_of,
    tree_hash,
    verify_consistency,
    verify_inclusion,
)

TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT  # 256 hashes, 8,192 bytes in a full tile
MAX_LEVEL = 63
MAX_ENTRY = 0xFFFF  # entry bundles carry a big-endian uint16 length

#: ``fetch(path)`` -> the bytes at ``<prefix>/<path>``: the only I/O a tile client needs, injected.
TileFetch = Callable[[str], bytes]

_PATH = re.compile(r"tile/(entries|0|[1-9][0-9]?)/((?:x[0-9]{3}/)*[0-9]{3})(?:\.p/([1-9][0-9]{0,2}))?")


@dataclass(frozen=True, order=True)
class Tile:
    """One tile: ``level`` (-1 for an entry bundle), ``index`` within the level, ``width`` 1..256."""

    level: int
    index: int
    width: int = TILE_WIDTH

    @property
    def path(self) -> str:
        """The tile's path under the log prefix, exactly as tlog-tiles draws it."""
        return tile_path(self.level, self.index, self.width)


def encode_index(n: int) -> str:
    """``N`` as zero-padded 3-digit path elements, all but the last prefixed ``x`` (1234067 → x001/x234/067)."""
    if n < 0:
        raise ValueError("a tile index is not negative")
    parts = [f"{n % 1000:03d}"]
    n //= 1000
    while n:
        parts.append(f"x{n % 1000:03d}")
        n //= 1000
    return "/".join(reversed(parts))


def tile_path(level: int, index: int, width: int = TILE_WIDTH) -> str:
    """``tile/<L>/<N>[.p/<W>]`` (level -1: ``tile/entries/...``); a full tile has no ``.p`` suffix."""
    if not -1 <= level <= MAX_LEVEL or not 1 <= width <= TILE_WIDTH:
        raise ValueError(f"no tile at level {level} of width {width}")
    name = "entries" if level == -1 else str(level)
    suffix = "" if width == TILE_WIDTH else f".p/{width}"
    return f"tile/{name}/{encode_index(index)}{suffix}"


def parse_tile_path(path: str) -> Tile:
    """The :class:`Tile` a path names; ValueError for anything tlog-tiles would not serve."""
    m = _PATH.fullmatch(path)
    if not m:
        raise ValueError(f"not a tlog-tiles path: {path[:120]!r}")
    level = -1 if m.group(1) == "entries" else int(m.group(1))
    if level > MAX_LEVEL:
        raise ValueError(f"tile level {level} above {MAX_LEVEL}")
    index = 0
    for part in m.group(2).split("/"):
        index = index * 1000 + int(part.lstrip("x"))
    width = int(m.group(3)) if m.group(3) else TILE_WIDTH
    if width > 255 and m.group(3):
        raise ValueError("a partial tile is 1..255 hashes wide")
    return Tile(level, index, width)


def tiles_for_size(size: int) -> Iterator[Tile]:
    """Every hash tile a tree of ``size`` leaves has: full ones, then the partial one of each level."""
    level = 0
    while size >> (TILE_HEIGHT * level):
        count = size >> (TILE_HEIGHT * level)
        for i in range(count // TILE_WIDTH):
            yield Tile(level, i)
        if count % TILE_WIDTH:
            yield Tile(level, count // TILE_WIDTH, count % TILE_WIDTH)
        level += 1


def tiles_added(old: int, new: int) -> Iterator[Tile]:
    """The hash tiles a tree has at ``new`` and had not at ``old``: what a log uploads per checkpoint."""
    before = set(tiles_for_size(old))
    for t in tiles_for_size(new):
        if t not in before:
            yield t


def tile_for(level: int, index: int, size: int) -> Tile:
    """The tile (full, or the partial one of this tree size) holding hash ``index`` of tile level ``level``."""
    count = size >> (TILE_HEIGHT * level)
    if index >= count:
        raise ValueError(f"hash {index} of tile level {level} is not in a tree of size {size}")
    n = index // TILE_WIDTH
    return Tile(level, n, min(TILE_WIDTH, count - n * TILE_WIDTH))


def tile_data(tree: MemoryTree, tile: Tile) -> bytes:
    """The bytes of a hash tile: its ``width`` hashes of tree level ``8·L``, concatenated."""
    row = tree.levels[TILE_HEIGHT * tile.level] if TILE_HEIGHT * tile.level < len(tree.levels) else []
    start = tile.index * TILE_WIDTH
    if start + tile.width > len(row):
        raise ValueError(f"{tile.path}: the tree has no such tile yet")
    return b"".join(row[start:start + tile.width])


def build_tiles(tree: MemoryTree, size: int | None = None) -> dict[str, bytes]:
    """Every hash tile of the tree at ``size`` (default: now), by path: the static tree to serve."""
    n = tree.size if size is None else size
    return {t.path: tile_data(tree, t) for t in tiles_for_size(n)}


def entry_bundle(entries: Sequence[bytes]) -> bytes:
    """Entries as one bundle: each a big-endian uint16 length then its bytes (1..256 entries)."""
    if not 1 <= len(entries) <= TILE_WIDTH:
        raise ValueError("an entry bundle holds 1..256 entries")
    out = bytearray()
    for e in entries:
        if len(e) > MAX_ENTRY:
            raise ValueError(f"an entry of {len(e)} bytes does not fit a bundle (at most {MAX_ENTRY})")
        out += struct.pack(">H", len(e)) + e
    return bytes(out)


def parse_entry_bundle(data: bytes, width: int) -> list[bytes]:
    """The ``width`` entries of a bundle; LogError when it is cut short or has bytes left over."""
    entries: list[bytes] = []
    pos = 0
    while pos < len(data):
        if pos + 2 > len(data):
            raise LogError("an entry bundle ends inside a length")
        (n,) = struct.unpack_from(">H", data, pos)
        if pos + 2 + n > len(data):
            raise LogError("an entry bundle ends inside an entry")
        entries.append(data[pos + 2:pos + 2 + n])
        pos += 2 + n
    if len(entries) != width:
        raise LogError(f"an entry bundle of {len(entries)} entries where {width} were expected")
    return entries


def bundles_for_size(size: int) -> Iterator[Tile]:
    """Every entry bundle of a log of ``size`` entries (level -1, same indices as level-0 tiles)."""
    for i in range(size // TILE_WIDTH):
        yield Tile(-1, i)
    if size % TILE_WIDTH:
        yield Tile(-1, size // TILE_WIDTH, size % TILE_WIDTH)


def split_hashes(data: bytes, width: int, path: str) -> list[bytes]:
    """A hash tile's ``width`` hashes; LogError for a tile of any other length."""
    if len(data) != width * HASH_SIZE:
        raise LogError(f"{path}: {len(data)} bytes where {width * HASH_SIZE} were expected")
    return [data[i:i + HASH_SIZE] for i in range(0, len(data), HASH_SIZE)]


class TileReader:
    """Reads complete subtree hashes of a tree of ``size`` from its tiles (a :data:`HashAt`), fetching each once.

    ``fetches`` counts the tile requests, so a benchmark can check the O(log n / 8) promise.
    """

    def __init__(self, size: int, fetch: TileFetch) -> None:
        """A reader for the tree at ``size`` (from a verified checkpoint): partial tiles are that size's."""
        self.size = size
        self._fetch = fetch
        self._tiles: dict[Tile, list[bytes]] = {}
        self.fetches = 0

    def tile(self, tile: Tile) -> list[bytes]:
        """The hashes of one tile (fetched once, then cached)."""
        if tile not in self._tiles:
            self.fetches += 1
            self._tiles[tile] = split_hashes(self._fetch(tile.path), tile.width, tile.path)
        return self._tiles[tile]

    def hash_at(self, level: int, index: int) -> bytes:
        """Hash of the complete subtree (level, index): a tile hash, or hashed up from 2^r of them."""
        tlevel, r = divmod(level, TILE_HEIGHT)
        first = index << r
        if (first + (1 << r)) > self.size >> (TILE_HEIGHT * tlevel):
            raise LogError(f"no complete subtree at level {level}, index {index} in a tree of size {self.size}")
        tile = tile_for(tlevel, first, self.size)
        hashes = self.tile(tile)
        offset = first - tile.index * TILE_WIDTH
        return root_of(hashes[offset:offset + (1 << r)])


def prove_inclusion(index: int, leaf: bytes, size: int, root: bytes, fetch: TileFetch) -> tuple[list[bytes], int]:
    """An inclusion proof for entry ``index`` from tiles, verified against ``root``; (proof, tile fetches)."""
    reader = TileReader(size, fetch)
    proof = inclusion_proof(index, size, reader.hash_at)
    verify_inclusion(index, size, leaf, proof, root)
    return proof, reader.fetches


def prove_consistency(old: int, old_root: bytes, new: int, new_root: bytes,
                      fetch: TileFetch) -> tuple[list[bytes], int]:
    """A consistency proof from tiles of the new tree, verified against both roots; (proof, tile fetches)."""
    reader = TileReader(new, fetch)
    proof = consistency_proof(old, new, reader.hash_at)
    verify_consistency(old, new, old_root, new_root, proof)
    return proof, reader.fetches


def verify_tiles(size: int, root: bytes, fetch: TileFetch, *, entries: bool = True) -> list[bytes]:
    """Fetch and check every tile (and entry bundle) of a tree of ``size`` against ``root``; return the entries.

    Each level-0 hash must be the leaf hash of its entry, each hash of level ``L`` the root of the
    full tile below it, and the tree's root the checkpoint's: the monitor's full audit.
    """
    rows: dict[int, list[bytes]] = {}
    for t in tiles_for_size(size):
        rows.setdefault(t.level, []).extend(split_hashes(fetch(t.path), t.width, t.path))
    for level, hashes in rows.items():
        if level == 0:
            continue
        below = rows[level - 1]
        for i, h in enumerate(hashes):
            if root_of(below[i * TILE_WIDTH:(i + 1) * TILE_WIDTH]) != h:
                raise LogInconsistent(f"{tile_path(level, i // TILE_WIDTH)}: hash {i} is not the root below it")
    out: list[bytes] = []
    if entries:
        for b in bundles_for_size(size):
            out.extend(parse_entry_bundle(fetch(b.path), b.width))
        level0 = rows.get(0, [])
        for i, e in enumerate(out):
            if leaf_hash(e) != level0[i]:
                raise LogInconsistent(f"entry {i} does not hash to its level-0 tile hash")
    rebuilt = MemoryTree(rows.get(0, []))
    if tree_hash(size, rebuilt.hash_at) != root:
        raise LogInconsistent(f"the tiles of size {size} do not lead to the checkpoint's root")
    return out


def read_hash_at(fetch: TileFetch, size: int) -> HashAt:
    """A :data:`HashAt` over tiles, for callers that compute their own proofs or roots."""
    return TileReader(size, fetch).hash_at
