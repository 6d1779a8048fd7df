"""The verifier's log on disk: ``STATE_DIR/log/`` *is* a tlog-tiles tree (``checkpoint``, ``tile/...``).

Crash safety comes from the order of writes, each a new file renamed into place: the entry
bundles and tiles of the new size first, then the signed checkpoint (the commit point), then the
witnesses' cosignatures added to it. A crash before the checkpoint leaves only tiles beyond the
committed size, which the next append overwrites; a tile inside a committed checkpoint is never
written again (``tiles_added`` never names it). Reopening rebuilds the tree from the level-0
tiles of the checkpoint's size and refuses a state whose tiles do not lead to its root.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from acx_oci.errors import AcxError, LogInconsistent, UsageError
from acx_oci.net import add_checkpoint
from acx_oci.services.artifacts import CHECKPOINT, entry_bytes
from acx_oci.tlog import (
    TILE_WIDTH,
    Checkpoint,
    Cosigner,
    MemoryTree,
    Tile,
    Verifier,
    bundles_for_size,
    ed25519_verifier,
    entry_bundle,
    open_checkpoint,
    parse,
    parse_entry_bundle,
    raw_public,
    sign_checkpoint,
    sigsum_origin,
    split_hashes,
    tile_data,
    tiles_added,
    tiles_for_size,
    with_signatures,
)

LOG_DIR = "log"
LOCK = ".lock"
WITNESS_STATE = "witnesses.json"
MAX_TILE_FILE = TILE_WIDTH * (2 + 0xFFFF)


@dataclass(frozen=True)
class Witness:
    """A witness the verifier submits checkpoints to: its tlog-witness URL prefix and cosigner identity."""

    url: str
    cosigner: Cosigner


@dataclass(frozen=True)
class Appended:
    """What one append did: the new entries' indices, the stored checkpoint note, who cosigned, who did not."""

    indices: list[int]
    checkpoint: bytes
    cosigned: tuple[str, ...]
    refused: tuple[str, ...]


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a new temporary beside ``path``, fsync it, rename it over ``path``, fsync the directory
    (so the rename itself survives a power loss: the checkpoint's rename is the log's commit)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class TransLog:
    """An append-only, witnessed Merkle log kept in ``STATE_DIR/log/`` and signed by the verifier's key."""

    def __init__(self, state_dir: str | Path, key: Ed25519PrivateKey, *, origin: str | None = None,
                 witnesses: Sequence[Witness] = ()) -> None:
        """Open (or start) the log; ``origin`` defaults to Sigsum's ``sigsum.org/v1/tree/<hex sha256(key)>``."""
        self.root = Path(state_dir) / LOG_DIR
        self.key = key
        self.origin = origin or sigsum_origin(raw_public(key))
        self.verifier: Verifier = ed25519_verifier(self.origin, raw_public(key))
        self.witnesses = tuple(witnesses)
        self.tree = MemoryTree()
        self._edge: list[bytes] = []  # the entries of the partial bundle at the right edge
        self._text = ""  # the committed checkpoint's text: another process's append changes it
        self._load()

    @property
    def size(self) -> int:
        """The committed tree size (the last checkpoint's)."""
        return self.tree.size

    def read(self, path: str) -> bytes:
        """The bytes of a tile, bundle or ``checkpoint`` of the committed log (its tlog-tiles path)."""
        target = self.root / path
        with target.open("rb") as fh:
            data = fh.read(MAX_TILE_FILE + 1)
        if len(data) > MAX_TILE_FILE:
            raise UsageError(f"{target}: larger than any tile")
        return data

    def checkpoint(self) -> bytes:
        """The latest checkpoint note, with the cosignature lines the witnesses gave."""
        return self.read(CHECKPOINT)

    def paths(self) -> list[str]:
        """Every tile and entry bundle path of the committed tree (what a full mirror holds)."""
        return [t.path for t in (*tiles_for_size(self.size), *bundles_for_size(self.size))]

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """An exclusive lock on the log directory: two verifier processes append one after the other."""
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / LOCK).open("a") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _load(self) -> None:
        if not (self.root / CHECKPOINT).exists():
            return
        note = self.read(CHECKPOINT)
        if parse(note).text == self._text:
            return  # nobody appended since we read it
        try:
            cp = open_checkpoint(note, self.verifier)
        except AcxError as exc:
            raise UsageError(f"{self.root / CHECKPOINT}: not this key's checkpoint for {self.origin} ({exc})") from None
        hashes: list[bytes] = []
        for t in tiles_for_size(cp.size):
            if t.level == 0:
                hashes.extend(split_hashes(self.read(t.path), t.width, t.path))
        tree = MemoryTree(hashes)
        if tree.root() != cp.root:
            raise LogInconsistent(f"{self.root}: the level-0 tiles do not lead to the checkpoint's root")
        self.tree = tree
        self._edge = []
        if cp.size % TILE_WIDTH:
            edge = Tile(-1, cp.size // TILE_WIDTH, cp.size % TILE_WIDTH)
            self._edge = parse_entry_bundle(self.read(edge.path), edge.width)
        self._text = cp.text()

    def append(self, entries: Sequence[dict[str, Any]]) -> Appended:
        """Add entries (schema-checked, canonical JSON), write tiles and a signed checkpoint, ask the witnesses.

        Returns the entries' indices and the stored checkpoint. A witness that refuses or cannot be
        reached is named in ``refused``; the checkpoint stays committed (the log cannot take an
        append back), and the next append offers that witness a proof from its last size again.
        """
        data = [entry_bytes(e) for e in entries]
        if not data:
            raise UsageError("nothing to append")
        with self._locked():
            self._load()
            return self._append(data)

    def _append(self, data: list[bytes]) -> Appended:
        old = self.size
        tree = MemoryTree()
        tree.levels = [list(row) for row in self.tree.levels]  # the committed tree stays as it is until the commit
        indices = [tree.append(d) for d in data]
        pending = self._edge + data
        first = old // TILE_WIDTH
        for k in range(0, len(pending), TILE_WIDTH):
            chunk = pending[k:k + TILE_WIDTH]
            write_atomic(self.root / Tile(-1, first + k // TILE_WIDTH, len(chunk)).path, entry_bundle(chunk))
        for t in tiles_added(old, tree.size):
            write_atomic(self.root / t.path, tile_data(tree, t))
        note = sign_checkpoint(Checkpoint(self.origin, tree.size, tree.root()), self.key)
        write_atomic(self.root / CHECKPOINT, note)  # the commit point
        self.tree = tree
        self._text = parse(note).text
        rest = len(pending) % TILE_WIDTH
        self._edge = pending[len(pending) - rest:] if rest else []
        cosigned, refused, lines = self._witness(note)
        if lines:
            note = with_signatures(note, lines)
            write_atomic(self.root / CHECKPOINT, note)
        return Appended(indices, note, cosigned, refused)

    def _witness(self, note: bytes) -> tuple[tuple[str, ...], tuple[str, ...], list[Any]]:
        state = self._witness_sizes()
        cosigned: list[str] = []
        refused: list[str] = []
        lines: list[Any] = []
        size = self.size
        for w in self.witnesses:
            old = min(state.get(w.url, 0), size)
            try:
                got = add_checkpoint(w.url, note, w.cosigner, lambda o: self.tree.consistency(o, size), old=old)
            except AcxError as exc:
                refused.append(f"{w.url}: {exc}")
                continue
            lines.extend(got.lines)
            state[w.url] = got.size
            cosigned.append(w.url)
        if cosigned:
            write_atomic(self.root / WITNESS_STATE, json.dumps(state, sort_keys=True).encode())
        return tuple(cosigned), tuple(refused), lines

    def _witness_sizes(self) -> dict[str, int]:
        path = self.root / WITNESS_STATE
        if not path.exists():
            return {}
        try:
            loaded = json.loads(path.read_bytes())
        except ValueError:
            return {}  # a guess only: a wrong size costs one 409 and a retry
        return {k: v for k, v in loaded.items() if isinstance(k, str) and isinstance(v, int) and v >= 0} \
            if isinstance(loaded, dict) else {}
