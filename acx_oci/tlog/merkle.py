"""RFC 6962 / RFC 9162 Merkle trees: hashing, tree heads, inclusion and consistency proofs.

The hashing is RFC 6962's (leaf ``SHA-256(0x00 || entry)``, node ``SHA-256(0x01 || left || right)``,
the empty tree ``SHA-256("")``), so any Certificate Transparency, Sigsum or C2SP client recomputes
our roots. Proof *generation* reads complete, aligned subtree hashes through a :data:`HashAt`
callable, so the same code proves from the in-memory :class:`MemoryTree` a log keeps and from the
tiles a consumer fetches (:mod:`acx_oci.tlog.tiles`); *verification* is RFC 9162 section 2.1.3.2
and 2.1.4.2 step by step, and never trusts anything it was not given as a root.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from acx_oci.errors import LogError, LogInconsistent, NotLogged

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()
#: More proof hashes than a 2**64-leaf tree needs: refused before any hashing.
MAX_PROOF = 64

#: ``hash_at(level, index)``: the hash of the complete subtree of ``2**level`` leaves starting at
#: leaf ``index * 2**level`` (level 0: leaf hashes).
HashAt = Callable[[int, int], bytes]


def leaf_hash(entry: bytes) -> bytes:
    """RFC 6962 leaf hash: the 0x00 prefix keeps a leaf from ever passing for an inner node."""
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 inner node hash (0x01 prefix: domain separation from leaves)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two strictly below ``n`` (n >= 2): where RFC 6962 splits a tree."""
    return 1 << ((n - 1).bit_length() - 1)


def root_of(hashes: Sequence[bytes]) -> bytes:
    """MTH of a list of leaf (or same-level) hashes, straight from the RFC's recursion; the reference."""
    if not hashes:
        return EMPTY_ROOT
    level = list(hashes)
    # Bottom-up over complete pairs; an odd last node is carried up unchanged (RFC 6962's shape).
    while len(level) > 1:
        nxt = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def range_hash(lo: int, hi: int, hash_at: HashAt) -> bytes:
    """MTH of leaves ``[lo, hi)`` from complete subtree hashes: at most 2·log2(hi-lo) reads.

    ``lo`` must be where RFC 6962's recursion can start a subtree (a multiple of the largest power
    of two not above ``hi - lo``), which holds for every range the proofs and tree heads ask for.
    """
    if hi <= lo:
        raise ValueError(f"empty range [{lo}, {hi})")
    n = hi - lo
    if n & (n - 1) == 0 and lo % n == 0:
        return hash_at(n.bit_length() - 1, lo // n)
    k = _split(n)
    return node_hash(range_hash(lo, lo + k, hash_at), range_hash(lo + k, hi, hash_at))


def tree_hash(size: int, hash_at: HashAt) -> bytes:
    """The root hash of the first ``size`` leaves (the empty tree's for 0)."""
    return EMPTY_ROOT if size == 0 else range_hash(0, size, hash_at)


def inclusion_proof(index: int, size: int, hash_at: HashAt) -> list[bytes]:
    """RFC 9162 2.1.3.1 PATH(index, D[0:size]), leaf to root: what a consumer needs to check one entry."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of size {size}")
    path: list[bytes] = []
    lo, hi = 0, size
    # Walk down from the root; each step records the sibling subtree, then the list is reversed.
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            path.append(range_hash(lo + k, hi, hash_at))
            hi = lo + k
        else:
            path.append(range_hash(lo, lo + k, hash_at))
            lo = lo + k
    path.reverse()
    return path


def consistency_proof(old: int, new: int, hash_at: HashAt) -> list[bytes]:
    """RFC 9162 2.1.4.1 PROOF(old, D[0:new]): shows the tree of size ``new`` extends that of ``old``.

    Empty when ``old`` is 0 or equals ``new`` (nothing to show), as tlog-witness requires.
    """
    if not 0 <= old <= new:
        raise ValueError(f"no consistency proof from size {old} to {new}")
    if old == 0 or old == new:
        return []
    proof: list[bytes] = []
    lo, hi, m, whole = 0, new, old, True
    while True:
        if m == hi - lo:
            if not whole:
                proof.append(range_hash(lo, hi, hash_at))
            break
        k = _split(hi - lo)
        if m <= k:
            proof.append(range_hash(lo + k, hi, hash_at))
            hi = lo + k
        else:
            proof.append(range_hash(lo, lo + k, hash_at))
            lo, m, whole = lo + k, m - k, False
    proof.reverse()
    return proof


def _check_hashes(proof: Sequence[bytes]) -> None:
    if len(proof) > MAX_PROOF:
        raise LogError(f"a proof of {len(proof)} hashes (at most {MAX_PROOF})")
    if any(len(h) != HASH_SIZE for h in proof):
        raise LogError("a proof hash is not 32 bytes")


def root_from_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """RFC 9162 2.1.3.2: the root an inclusion proof leads to (raise when its shape cannot fit)."""
    _check_hashes(proof)
    if not 0 <= index < size:
        raise NotLogged(f"leaf index {index} is not below the tree size {size}")
    if len(leaf) != HASH_SIZE:
        raise NotLogged("the leaf hash is not 32 bytes")
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise NotLogged("the inclusion proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise NotLogged("the inclusion proof is shorter than the tree is deep")
    return r


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes) -> None:
    """Raise :class:`NotLogged` unless ``leaf`` is entry ``index`` of the tree of ``size`` with ``root``."""
    if root_from_inclusion(index, size, leaf, proof) != root:
        raise NotLogged(f"the inclusion proof of entry {index} does not lead to the root of size {size}")


def verify_consistency(old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]) -> None:
    """RFC 9162 2.1.4.2: raise :class:`LogInconsistent` unless the tree (new, new_root) extends (old, old_root).

    Equal sizes need equal roots and an empty proof; from size 0 the proof must be empty (the
    empty tree is a prefix of every tree: tlog-witness's rule, where transparency-dev/merkle calls
    such a proof meaningless and refuses it); a smaller ``new`` is never consistent (a log shrank).
    """
    _check_hashes(proof)
    if len(old_root) != HASH_SIZE or len(new_root) != HASH_SIZE:
        raise LogInconsistent("a root hash is not 32 bytes")
    if not 0 <= old <= new:
        raise LogInconsistent(f"a tree of size {new} cannot extend one of size {old}")
    if old == new or old == 0:
        if proof:
            raise LogInconsistent("a consistency proof where none is needed")
        if old == new and old_root != new_root:
            raise LogInconsistent(f"two different roots for the same size {old}")
        if old == 0 and old_root != EMPTY_ROOT:
            raise LogInconsistent("the empty tree's root is not SHA-256 of nothing")
        return
    if not proof:
        raise LogInconsistent("an empty consistency proof")
    path = list(proof)
    if old & (old - 1) == 0:
        path.insert(0, old_root)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise LogInconsistent("the consistency proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise LogInconsistent("the consistency proof is shorter than the tree is deep")
    if fr != old_root or sr != new_root:
        raise LogInconsistent(f"the tree of size {new} does not extend the one of size {old}")


class MemoryTree:
    """An append-only tree keeping every complete subtree hash: O(log n) per append, any proof at once.

    ``levels[l][i]`` is the hash of leaves ``[i·2^l, (i+1)·2^l)``, exactly what tiles store, so the
    tile builder and the proof generator read the same structure.
    """

    def __init__(self, leaf_hashes: Sequence[bytes] = ()) -> None:
        """An empty tree, or one grown from ``leaf_hashes`` (e.g. re-read from storage)."""
        self.levels: list[list[bytes]] = [[]]
        for h in leaf_hashes:
            self.append_hash(h)

    @property
    def size(self) -> int:
        """The number of leaves: the checkpoint's tree size."""
        return len(self.levels[0])

    def append(self, entry: bytes) -> int:
        """Append one entry; return its index (its position in every later tree)."""
        return self.append_hash(leaf_hash(entry))

    def append_hash(self, leaf: bytes) -> int:
        """Append one leaf hash and every complete subtree it finishes; return its index."""
        if len(leaf) != HASH_SIZE:
            raise ValueError("a leaf hash is 32 bytes")
        index = len(self.levels[0])
        self.levels[0].append(leaf)
        level, i = 0, index
        while i & 1:
            if len(self.levels) == level + 1:
                self.levels.append([])
            row = self.levels[level]
            self.levels[level + 1].append(node_hash(row[i - 1], row[i]))
            level, i = level + 1, i >> 1
        return index

    def hash_at(self, level: int, index: int) -> bytes:
        """A complete subtree's hash (:data:`HashAt`); IndexError when that subtree is not complete yet."""
        if level >= len(self.levels) or index >= len(self.levels[level]) or index < 0:
            raise IndexError(f"no complete subtree at level {level}, index {index}")
        return self.levels[level][index]

    def root(self, size: int | None = None) -> bytes:
        """The root hash at ``size`` (default: now); any earlier size works, so old checkpoints re-prove."""
        n = self.size if size is None else size
        if not 0 <= n <= self.size:
            raise ValueError(f"no tree of size {n} (the log has {self.size} entries)")
        return tree_hash(n, self.hash_at)

    def inclusion(self, index: int, size: int | None = None) -> list[bytes]:
        """The inclusion proof of entry ``index`` in the tree of ``size`` (default: now)."""
        return inclusion_proof(index, self.size if size is None else size, self.hash_at)

    def consistency(self, old: int, new: int | None = None) -> list[bytes]:
        """The consistency proof from size ``old`` to ``new`` (default: now)."""
        return consistency_proof(old, self.size if new is None else new, self.hash_at)
