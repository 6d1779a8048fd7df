"""The verifier's transparency log: on disk, in a real registry, read back with proofs, and witnessed."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from acx_oci.crypto import canonical
from acx_oci.errors import LogInconsistent, UsageError
from acx_oci.oci import MEDIA_MANIFEST, build_manifest, open_store
from acx_oci.services.artifacts import ARTIFACT_LOG, CHECKPOINT_TAG, MEDIA_TILE, MEDIA_TILE_INDEX, LogReader
from acx_oci.services.consumer import verify_log
from acx_oci.services.verifier.log_publish import publish
from acx_oci.services.verifier.log_tree import TransLog, Witness
from acx_oci.tlog import MemoryTree
from acx_oci.tlog import checkpoint as C
from acx_oci.tlog import note as N

from ..support.cli import cli, ok
from ..support.jsondoc import check_document
from ..support.sigsum_witness import RunningWitness, sigsum_witness

DIGEST = "sha256:" + "ab" * 32


def _checked(command: str, res: Any) -> Any:
    """A ``--json`` run, exit 0, its stdout valid against the schema the package ships for ``command``."""
    check_document(command, res.stdout, res.exit_code)
    return ok(res)


def attempt(i: int, cartridge: str = "io.github.acme/dag-agent") -> dict[str, Any]:
    return {"kind": "attempt", "time": "2026-12-02T01:00:00Z", "cartridgeId": cartridge, "romDigest": DIGEST,
            "benchmarkDigest": DIGEST, "capability": "build-dag@data-engineering",
            "verdict": "issued" if i % 3 else "not-issued", "reasons": [] if i % 3 else ["sigma_gate"],
            "mu": 30.5, "sigma": 1.2, "level": 26 + i % 5, "recordDigest": f"sha256:{i:064x}"}


def leaf(entry: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry).digest()


def mth(hashes: list[bytes]) -> bytes:
    """RFC 6962 MTH straight from the recursion, independent of acx_oci.tlog."""
    if len(hashes) == 1:
        return hashes[0]
    k = 1 << ((len(hashes) - 1).bit_length() - 1)
    return hashlib.sha256(b"\x01" + mth(hashes[:k]) + mth(hashes[k:])).digest()


@pytest.fixture
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def _grown(state: Path, key: Ed25519PrivateKey, n: int = 300, extra: dict[int, str] | None = None) -> TransLog:
    log = TransLog(state, key)
    batch = [attempt(i, (extra or {}).get(i, "io.github.acme/dag-agent")) for i in range(n)]
    for lo, hi in ((0, 1), (1, 255), (255, 257), (257, n)):  # crosses the first tile boundary mid-batch
        log.append(batch[lo:hi])
    return log


def test_append_across_tile_boundaries_and_reopen(tmp_path: Path, key: Ed25519PrivateKey) -> None:
    log = _grown(tmp_path, key)
    entries = [canonical({"schemaVersion": "acx.log-entry/1", **attempt(i)}) for i in range(300)]
    assert log.size == 300 and log.tree.root() == mth([leaf(e) for e in entries])
    root = tmp_path / "log"
    assert (root / "tile/0/000").stat().st_size == 256 * 32 and (root / "tile/0/001.p/44").stat().st_size == 44 * 32
    assert (root / "tile/1/000.p/1").read_bytes() == mth([leaf(e) for e in entries[:256]])
    full_tile = (root / "tile/0/000").stat().st_mtime_ns
    again = TransLog(tmp_path, key)
    assert again.size == 300 and again.tree.root() == log.tree.root()
    got = again.append([attempt(300)])
    assert got.indices == [300] and (root / "tile/0/000").stat().st_mtime_ns == full_tile  # never rewritten
    cp = C.open_checkpoint(got.checkpoint, again.verifier)
    assert cp.size == 301 and cp.origin == C.sigsum_origin(N.raw_public(key))
    with pytest.raises(Exception, match="log entry"):
        again.append([{"kind": "attempt", "time": "2026-12-02T01:00:00Z"}])  # schema: fields missing
    assert TransLog(tmp_path, key).size == 301
    with pytest.raises(Exception, match="not this key's checkpoint"):
        TransLog(tmp_path, Ed25519PrivateKey.generate())


def test_two_writers_a_crash_leftover_and_a_corrupt_tile(tmp_path: Path, key: Ed25519PrivateKey) -> None:
    a, b = TransLog(tmp_path, key), TransLog(tmp_path, key)
    a.append([attempt(0), attempt(1)])
    got = b.append([attempt(2)])  # b opened before a's append: it re-reads the log under the lock
    assert got.indices == [2] and C.open_checkpoint(got.checkpoint, b.verifier).size == 3
    root = tmp_path / "log"
    # a crash after the tiles of size 5 were written but before the checkpoint: leftovers beyond size 3
    (root / "tile/0/000.p/5").write_bytes(b"\xff" * 160)
    (root / "tile/entries/000.p/5").write_bytes(b"garbage")
    reopened = TransLog(tmp_path, key)
    assert reopened.size == 3
    reopened.append([attempt(3), attempt(4)])
    assert (root / "tile/0/000.p/5").read_bytes() == reopened.read("tile/0/000.p/5") != b"\xff" * 160
    assert TransLog(tmp_path, key).tree.root() == mth([leaf(canonical({"schemaVersion": "acx.log-entry/1",
                                                                        **attempt(i)})) for i in range(5)])
    tile = bytearray((root / "tile/0/000.p/5").read_bytes())
    tile[0] ^= 1
    (root / "tile/0/000.p/5").write_bytes(bytes(tile))
    with pytest.raises(LogInconsistent):
        TransLog(tmp_path, key)


def test_an_unreachable_witness_is_named_and_the_append_stays(tmp_path: Path, key: Ed25519PrivateKey) -> None:
    cosigner = C.sigsum_cosigner(N.raw_public(Ed25519PrivateKey.generate()))
    log = TransLog(tmp_path, key, witnesses=[Witness("http://127.0.0.1:9", cosigner)])
    got = log.append([attempt(0)])
    assert got.cosigned == () and len(got.refused) == 1 and "127.0.0.1:9" in got.refused[0]
    assert TransLog(tmp_path, key).size == 1


def test_an_oci_layout_holds_a_log_too(tmp_path: Path, key: Ed25519PrivateKey) -> None:
    log = _grown(tmp_path / "state", key, n=260)
    where = f"oci:{tmp_path / 'layout'}"
    with open_store(where) as store:
        assert publish(log, store).uploaded == 5
        assert publish(log, store).uploaded == 0  # nothing new: idempotent
    doc = _checked("log verify", cli("log", "verify", where, "--key", log.verifier.vkey(), "--json"))
    assert doc["size"] == 260 and doc["entries"][259]["recordDigest"] == f"sha256:{259:064x}"
    other = _grown(tmp_path / "other", Ed25519PrivateKey.generate(), n=270)
    fork = TransLog(tmp_path / "fork", key)  # the same key, another history
    fork.append([attempt(i + 1) for i in range(270)])
    with open_store(where) as store:
        with pytest.raises(UsageError, match="holds the log of"):
            publish(other, store)
        with pytest.raises(LogInconsistent, match="another history"):
            publish(fork, store)
        assert LogReader(store).head().checkpoint.size == 260  # the served log is untouched


def test_the_entry_schema_takes_three_kinds_and_nothing_else(tmp_path: Path, key: Ed25519PrivateKey) -> None:
    log = TransLog(tmp_path, key)
    status = {"kind": "status-list", "time": "2026-12-02T01:00:00Z", "url": "https://v.example/status/1",
              "sequence": 7, "digest": DIGEST}
    rotation = {"kind": "key-rotation", "time": "2026-12-02T01:00:00Z", "previousKey": "z6MkOld", "newKey": "z6MkNew"}
    assert log.append([status, rotation, attempt(1)]).indices == [0, 1, 2]
    for bad in ({**status, "kind": "credential"}, {**status, "extra": 1}, {**rotation, "time": "yesterday"},
                {**attempt(1), "romDigest": "sha256:short"}, {**attempt(1), "url": "https://x"}):
        with pytest.raises(UsageError):
            log.append([bad])
    assert TransLog(tmp_path, key).size == 3


@pytest.fixture
def published(tmp_path: Path, key: Ed25519PrivateKey, registry: str) -> tuple[TransLog, str]:
    log = _grown(tmp_path / "state", key, extra={7: "io.github.other/agent", 299: "io.github.other/agent"})
    repo = f"{registry}/verifier/log-{uuid.uuid4().hex[:8]}"
    with open_store(repo) as store:
        first = publish(log, store)
        assert first.size == 300 and first.uploaded == 5  # tile/0/000, tile/0/001.p/44, tile/1/000.p/1, two bundles
        log.append([attempt(300)])
        second = publish(log, store)
        assert second.size == 301 and second.uploaded == 2  # only the right edge's new level-0 tile and bundle
    return log, repo


def test_publish_to_the_registry_and_log_verify(published: tuple[TransLog, str], tmp_path: Path) -> None:
    log, repo = published
    vkey = log.verifier.vkey()
    # the cron line as documented (--since and --save the same file) works on its first run too: nothing to compare
    first = cli("log", "verify", repo, "--key", vkey, "--json", "--since", tmp_path / "seen.cp",
                "--save", tmp_path / "seen.cp")
    _checked("log verify", first)
    doc = json.loads(first.stdout)  # the note is on stderr: stdout stays the one JSON document
    assert "first run: no saved checkpoint at" in first.stderr and (tmp_path / "seen.cp").is_file()
    missing = cli("log", "verify", repo, "--key", vkey, "--since", tmp_path / "other.cp")
    assert missing.exit_code == 2 and "saved checkpoint: file not found" in missing.stderr, missing.output
    assert doc["size"] == 301 and doc["keyPinned"] is True and len(doc["entries"]) == 301
    assert doc["entries"][7]["cartridgeId"] == "io.github.other/agent"
    watch = _checked("log watch", cli("log", "watch", repo, "--cartridge", "io.github.other/agent", "--key", vkey,
                                       "--json"))
    assert [e["index"] for e in watch["entries"]] == [7, 299]
    log.append([attempt(301)])
    with open_store(repo) as store:
        publish(log, store)
    text = ok(cli("log", "verify", repo, "--key", vkey, "--since", tmp_path / "seen.cp"))
    assert "302 entries" in text and "consistent with the saved checkpoint of size 301" in text
    unpinned = ok(cli("log", "verify", repo))
    assert "NOT pinned" in unpinned
    other = N.ed25519_verifier(log.origin, N.raw_public(Ed25519PrivateKey.generate())).vkey()
    res = cli("log", "verify", repo, "--key", other)
    assert res.exit_code == 1 and res.output.startswith("error: ") and len(res.output.splitlines()) == 1


def test_inclusion_proof_within_the_fetch_bound(published: tuple[TransLog, str]) -> None:
    log, repo = published
    entries = {i: canonical({"schemaVersion": "acx.log-entry/1", **attempt(i)}) for i in (0, 128, 255, 256, 300)}
    with open_store(repo) as store:
        for i, entry in entries.items():
            reader = LogReader(store)
            cp = reader.verify(log.verifier).checkpoint
            proof, fetches = reader.prove(i, entry, cp)
            bound = -(-(cp.size - 1).bit_length() // 8) + 2  # ceil(log2 n / 8) + 2
            assert fetches == reader.tile_fetches and 1 <= fetches <= bound, (i, fetches, bound)
            assert proof == log.tree.inclusion(i, cp.size)
        with pytest.raises(Exception, match="inclusion proof"):
            reader.prove(5, entries[0], cp)  # the wrong entry at an index is not logged


def test_export_is_the_tlog_tiles_layout(published: tuple[TransLog, str], tmp_path: Path) -> None:
    log, repo = published
    out = tmp_path / "www"
    _checked("log export", cli("log", "export", repo, out, "--json"))
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == ["checkpoint", "tile/0/000", "tile/0/001.p/45", "tile/1/000.p/1", "tile/entries/000",
                     "tile/entries/001.p/45"]
    assert (out / "checkpoint").read_bytes() == log.checkpoint()
    entries = [json.loads(e) for e in _bundle((out / "tile/entries/000").read_bytes())]
    assert len(entries) == 256 and entries[3]["recordDigest"] == f"sha256:{3:064x}"
    raw = _bundle((out / "tile/entries/000").read_bytes())
    assert (out / "tile/0/000").read_bytes() == b"".join(leaf(e) for e in raw)  # the tile computed with hashlib
    assert (out / "tile/1/000.p/1").read_bytes() == mth([leaf(e) for e in raw])
    for path in ("tile/0/000", "tile/0/001.p/45", "tile/1/000.p/1"):
        assert (out / path).read_bytes() == log.read(path)
    res = cli("log", "export", repo, out)  # never overwrites
    assert res.exit_code != 0 and "written twice" in res.output


def _bundle(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 2], "big")
        out.append(data[pos + 2:pos + 2 + n])
        pos += 2 + n
    return out


def test_a_tampered_tile_fails_log_verify(published: tuple[TransLog, str]) -> None:
    log, repo = published
    with open_store(repo) as store:
        manifest = store.fetch_manifest(CHECKPOINT_TAG)
        note_d, idx_d = manifest.layers
        index = json.loads(store.fetch_blob(idx_d.digest))
        tile = bytearray(log.read("tile/0/000"))
        tile[40] ^= 1  # one bit of leaf 1's hash
        index["tiles"]["tile/0/000"] = store.push_blob(bytes(tile), MEDIA_TILE).digest
        forged = store.push_blob(canonical(index), MEDIA_TILE_INDEX)
        store.push_manifest(build_manifest(ARTIFACT_LOG, [note_d, forged], annotations=manifest.annotations),
                            MEDIA_MANIFEST, tag=CHECKPOINT_TAG)
    res = cli("log", "verify", repo, "--key", log.verifier.vkey())
    assert res.exit_code == 1 and "error:" in res.output, res.output
    with open_store(repo) as store, pytest.raises(LogInconsistent):
        verify_log(LogReader(store), log.verifier)


def test_a_forked_checkpoint_saved_with_since_is_log_inconsistent(published: tuple[TransLog, str],
                                                                 tmp_path: Path, key: Ed25519PrivateKey) -> None:
    log, repo = published
    fork = MemoryTree(log.tree.levels[0][:300])
    fork.append(b'{"the":"other history"}')
    forked = C.sign_checkpoint(C.Checkpoint(log.origin, 301, fork.root()), key)
    (tmp_path / "fork.cp").write_bytes(forked)
    res = cli("log", "verify", repo, "--key", log.verifier.vkey(), "--since", tmp_path / "fork.cp")
    assert res.exit_code == 1 and "forked" in res.output, res.output
    with open_store(repo) as store, pytest.raises(LogInconsistent):
        verify_log(LogReader(store), log.verifier, since=forked)
    bigger = C.sign_checkpoint(C.Checkpoint(log.origin, 400, fork.root()), key)  # the log would have shrunk
    with open_store(repo) as store, pytest.raises(LogInconsistent, match="shrank"):
        verify_log(LogReader(store), log.verifier, since=bigger)


@pytest.fixture
def witness(tmp_path: Path, key: Ed25519PrivateKey) -> Iterator[RunningWitness]:
    with sigsum_witness(tmp_path, key) as w:
        yield w


def test_the_sigsum_witness_cosigns_every_append(tmp_path: Path, key: Ed25519PrivateKey, witness: RunningWitness,
                                                 registry: str) -> None:
    cosigner = C.sigsum_cosigner(N.raw_public(witness.key))
    state = tmp_path / "state"
    for lo, hi in ((0, 3), (3, 255), (255, 300)):
        log = TransLog(state, key, witnesses=[Witness(witness.url, cosigner)])  # reopened each time
        got = log.append([attempt(i) for i in range(lo, hi)])
        assert got.cosigned == (witness.url,) and got.refused == ()
        stored = C.verify_cosigned(log.checkpoint(), log.verifier, [cosigner], 1)
        assert stored.checkpoint.size == hi and log.checkpoint() == got.checkpoint
        assert sum(1 for line in got.checkpoint.decode().splitlines() if line.startswith("\u2014 ")) == 2
    repo = f"{registry}/verifier/log-{uuid.uuid4().hex[:8]}"
    with open_store(repo) as store:
        publish(log, store)
    doc = ok(cli("log", "verify", repo, "--key", log.verifier.vkey(), "--witness", cosigner.vkey(), "--json"))
    assert doc["witnesses"] == [cosigner.name] and doc["size"] == 300
    stranger = C.Cosigner(cosigner.name, N.raw_public(Ed25519PrivateKey.generate()))
    res = cli("log", "verify", repo, "--key", log.verifier.vkey(), "--witness", stranger.vkey())
    assert res.exit_code == 1 and "0 of the 1" in res.output
