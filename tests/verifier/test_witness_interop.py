"""Our checkpoints, signed notes and consistency proofs against the real sigsum-witness (sigsum-go 0.11.2).

The witness is an independent implementation of tlog-witness, signed-note and tlog-cosignature:
if it cosigns our checkpoints across appends, our formats and proofs are right; its cosignatures
must then verify with our verifier, and it must refuse what a lying log would send (a fork of
the same size, a smaller tree, a checkpoint not signed by the log's key).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from acx_oci.errors import LogInconsistent, NoteUnverified, WitnessRefused
from acx_oci.net import add_checkpoint, https
from acx_oci.tlog import checkpoint as C
from acx_oci.tlog import encode_add_checkpoint
from acx_oci.tlog import merkle as M
from acx_oci.tlog import note as N

from ..support.sigsum_witness import RunningWitness, sigsum_witness


class Log:
    """A log as a verifier would keep it: a tree, its Ed25519 key, the Sigsum origin."""

    def __init__(self) -> None:
        self.key = Ed25519PrivateKey.generate()
        self.origin = C.sigsum_origin(N.raw_public(self.key))
        self.verifier = N.ed25519_verifier(self.origin, N.raw_public(self.key))
        self.tree = M.MemoryTree()

    def grow(self, n: int) -> bytes:
        for _ in range(n):
            self.tree.append(b'{"attempt":%d}' % self.tree.size)
        return C.sign_checkpoint(C.Checkpoint(self.origin, self.tree.size, self.tree.root()), self.key)

    def proof_from(self, old: int) -> list[bytes]:
        return self.tree.consistency(old)


@pytest.fixture
def log() -> Log:
    return Log()


@pytest.fixture
def witness(tmp_path: Path, log: Log) -> Iterator[RunningWitness]:
    with sigsum_witness(tmp_path, log.key) as w:
        yield w


def _post(w: RunningWitness, body: bytes) -> tuple[int, bytes]:
    status, _, answer = https.request("POST", w.url + "/add-checkpoint", max_bytes=65536, body=body,
                                      content_type="text/plain", accept="text/plain")
    return status, answer


def test_the_witness_cosigns_our_checkpoints_across_appends(log: Log, witness: RunningWitness) -> None:
    cosigner = C.sigsum_cosigner(N.raw_public(witness.key))
    known = 0
    for n in (3, 5, 248, 1, 767, 1000):  # crosses tile and power-of-two boundaries
        note = log.grow(n)
        got = add_checkpoint(witness.url, note, cosigner, log.proof_from, old=known)
        assert got.size == log.tree.size and len(got.lines) == 1
        cosigned = C.verify_cosigned(N.with_signatures(note, got.lines), log.verifier, [cosigner], 1)
        (who, when), = cosigned.witnesses
        assert who == cosigner and when > 1_700_000_000 and cosigned.checkpoint.size == log.tree.size
        known = got.size
    # a client that does not know the witness's size learns it from the 409 and retries with a proof from it
    note = log.grow(10)
    got = add_checkpoint(witness.url, note, cosigner, log.proof_from, old=0)
    assert got.size == known + 10
    C.verify_cosigned(N.with_signatures(note, got.lines), log.verifier, [cosigner], 1)


def test_a_fork_of_the_same_size_is_refused_and_has_no_quorum(log: Log, witness: RunningWitness) -> None:
    cosigner = C.sigsum_cosigner(N.raw_public(witness.key))
    note = log.grow(20)
    got = add_checkpoint(witness.url, note, cosigner, log.proof_from)
    fork = M.MemoryTree(log.tree.levels[0][:19])
    fork.append(b'{"attempt":"the other history"}')
    forked = C.sign_checkpoint(C.Checkpoint(log.origin, 20, fork.root()), log.key)
    status, _ = _post(witness, encode_add_checkpoint(20, [], forked))
    assert status == 422
    with pytest.raises(WitnessRefused) as refused:
        add_checkpoint(witness.url, forked, cosigner, fork.consistency, old=20)
    assert refused.value.status == 422
    # the witness's cosignature does not move onto the fork, and the fork alone has no quorum
    with pytest.raises(NoteUnverified):
        C.verify_cosigned(N.with_signatures(forked, got.lines), log.verifier, [cosigner], 1)
    with pytest.raises(NoteUnverified, match="0 of the 1"):
        C.verify_cosigned(forked, log.verifier, [cosigner], 1)
    with pytest.raises(LogInconsistent):
        M.verify_consistency(20, 20, log.tree.root(), fork.root(), [])
    # and a fork that extends a rewritten past is refused too (its consistency proof cannot verify)
    fork.append(b"more")
    longer = C.sign_checkpoint(C.Checkpoint(log.origin, 21, fork.root()), log.key)
    with pytest.raises(WitnessRefused) as refused:
        add_checkpoint(witness.url, longer, cosigner, fork.consistency, old=20)
    assert refused.value.status == 422


def test_a_smaller_checkpoint_is_refused(log: Log, witness: RunningWitness) -> None:
    cosigner = C.sigsum_cosigner(N.raw_public(witness.key))
    small = log.grow(7)
    add_checkpoint(witness.url, log.grow(9), cosigner, log.proof_from)
    status, answer = _post(witness, encode_add_checkpoint(16, [], small))
    assert status == 400  # old size above the checkpoint's
    status, answer = _post(witness, encode_add_checkpoint(0, [], small))
    assert (status, answer) == (409, b"16\n")
    with pytest.raises(LogInconsistent, match="16, above this checkpoint's 7"):
        add_checkpoint(witness.url, small, cosigner, log.proof_from)


def test_a_checkpoint_not_signed_by_the_log_key_is_refused(log: Log, witness: RunningWitness) -> None:
    cosigner = C.sigsum_cosigner(N.raw_public(witness.key))
    log.grow(4)
    impostor = C.sign_checkpoint(C.Checkpoint(log.origin, 4, log.tree.root()), Ed25519PrivateKey.generate())
    with pytest.raises(WitnessRefused) as refused:
        add_checkpoint(witness.url, impostor, cosigner, log.proof_from)
    assert refused.value.status == 403
    other = Log()
    other.grow(4)
    with pytest.raises(WitnessRefused) as refused:  # a log the witness does not know
        add_checkpoint(witness.url, C.sign_checkpoint(C.Checkpoint(other.origin, 4, other.tree.root()), other.key),
                       cosigner, other.proof_from)
    assert refused.value.status in (403, 404)
