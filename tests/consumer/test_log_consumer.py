"""The consumer's log check on in-memory bytes: a real tree, real Ed25519 notes and cosignatures, no registry.

Each case builds what a lying or careless verifier would show (a fork, a shrink, a rewind, a bad
path, an entry for another credential, a checkpoint without the witness's cosignature) and asserts
the one reason code the check must name; the honest case must pass, so a check that refuses
everything fails here too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from acx_oci import reasons
from acx_oci.crypto import canonical
from acx_oci.errors import LogError, UsageError
from acx_oci.evaluation import LogView
from acx_oci.evaluation.log_check import check_logged, log_keys, log_superseded
from acx_oci.model import AcceptedCredential, LevelCredential
from acx_oci.oci import open_store
from acx_oci.services.artifacts import LogReader
from acx_oci.services.consumer.log_fetch import read_history
from acx_oci.services.verifier.log_tree import TransLog
from acx_oci.tlog import LogProof, MemoryTree, TileReader
from acx_oci.tlog import checkpoint as C
from acx_oci.tlog import note as N
from acx_oci.trust import LogTrust, load_trust

from ..support.cli import cli
from ..support.logged import force_publish

ISSUER = "did:key:z6MkverifierXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"
D = "sha256:" + "1" * 64
CRED_DIGEST = "sha256:" + "c" * 64
NOW = 1_800_000_000


def credential(cap: str = "acx-cap:sha256:" + "a" * 64) -> dict[str, Any]:
    return {"issuer": {"id": ISSUER}, "credentialSubject": {"id": "urn:acx:cartridge:io.github.acme/agent@1.0.0",
                                                             "result": [{"acx:cartridgeRomDigest": D,
                                                                         "acx:benchmarkDigest": D,
                                                                         "acx:capabilityId": cap}]}}


def entry(record: str = CRED_DIGEST, cap: str = "acx-cap:sha256:" + "a" * 64, **over: Any) -> dict[str, Any]:
    e = {"schemaVersion": "acx.log-entry/1", "kind": "attempt", "time": "2026-12-01T00:00:00Z", "issuer": ISSUER,
         "cartridgeId": "io.github.acme/agent", "romDigest": D, "benchmarkDigest": D, "capability": cap,
         "verdict": "issued", "reasons": [], "recordDigest": record}
    return {**e, **over}


class Log:
    """A verifier's log in memory: a tree, its key, optional witnesses' keys that cosign each checkpoint."""

    def __init__(self, key: Ed25519PrivateKey | None = None) -> None:
        self.key = key or Ed25519PrivateKey.generate()
        self.origin = C.sigsum_origin(N.raw_public(self.key))
        self.tree = MemoryTree()
        self.entries: list[dict[str, Any]] = []

    def add(self, e: dict[str, Any]) -> int:
        self.entries.append(e)
        return self.tree.append(canonical(e))

    def note(self, size: int | None = None, witness: Ed25519PrivateKey | None = None) -> bytes:
        size = self.tree.size if size is None else size
        cp = C.Checkpoint(self.origin, size, self.tree.root(size))
        signed = C.sign_checkpoint(cp, self.key)
        if witness is not None:
            signed = N.with_signatures(signed, [C.cosign(cp.text(), wname(witness), witness, NOW - 10)])
        return signed

    def proof(self, index: int, size: int | None = None, witness: Ed25519PrivateKey | None = None) -> bytes:
        size = self.tree.size if size is None else size
        return LogProof(self.origin, index, self.entries[index], tuple(self.tree.inclusion(index, size)),
                        self.note(size, witness)).to_bytes()

    def trust(self, witnesses: tuple[Ed25519PrivateKey, ...] = (), quorum: int = 0) -> LogTrust:
        v = N.ed25519_verifier(self.origin, N.raw_public(self.key))
        return LogTrust(self.origin, v.vkey(), "127.0.0.1:5000/logs/v",
                        tuple(C.Cosigner(wname(w), N.raw_public(w)).vkey() for w in witnesses), quorum)

    def view(self, head_size: int | None = None, remembered: bytes | None = None, olds: tuple[int, ...] = (),
             witness: Ed25519PrivateKey | None = None) -> LogView:
        size = self.tree.size if head_size is None else head_size
        proofs = {(o, size): tuple(self.tree.consistency(o, size)) for o in olds if 0 < o < size}
        return LogView(self.note(size, witness), remembered, proofs)


def wname(w: Ed25519PrivateKey) -> str:
    return C.sigsum_cosigner(N.raw_public(w)).name


def check(log: Log, proof: bytes | None, view: LogView, trust: LogTrust | None = None, cred: Any = None) -> str | None:
    return check_logged(proof, cred or credential(), CRED_DIGEST, log_keys(trust or log.trust()), view, NOW).code


@pytest.fixture
def log() -> Log:
    lg = Log()
    lg.add(entry("sha256:" + "0" * 64))
    lg.add(entry())
    lg.add(entry("sha256:" + "2" * 64))
    return lg


def test_a_logged_credential_passes_and_names_its_index(log: Log) -> None:
    v = check_logged(log.proof(1, 2), credential(), CRED_DIGEST, log_keys(log.trust()), log.view(olds=(2,)), NOW)
    assert (v.code, v.index) == (None, 1)


def test_no_proof_or_a_bad_path_or_another_credential_is_not_logged(log: Log) -> None:
    assert check(log, None, log.view()) == reasons.NOT_LOGGED
    doc = json.loads(log.proof(1))
    doc["inclusion"][0] = "A" * 43 + "="
    assert check(log, canonical(doc), log.view()) == reasons.NOT_LOGGED
    assert check(log, log.proof(0), log.view()) == reasons.NOT_LOGGED  # entry 0 is another credential's
    assert check(log, log.proof(1), log.view(), cred=credential("acx-cap:sha256:" + "b" * 64)) == reasons.NOT_LOGGED
    assert check(log, b"{not json", log.view()) == reasons.NOT_LOGGED


def test_a_fork_of_the_same_size_is_inconsistent(log: Log) -> None:
    fork = Log(log.key)  # the verifier's own key signs a second history of the same size
    for e in (*log.entries[:2], entry("sha256:" + "9" * 64)):
        fork.add(e)
    assert fork.tree.root() != log.tree.root()
    assert check(log, log.proof(1), log.view()) is None
    assert check(fork, fork.proof(1), fork.view(remembered=log.note())) == reasons.LOG_INCONSISTENT
    # the proof's own checkpoint, from the other branch, is caught even by a first-time consumer
    assert check(log, log.proof(1), fork.view()) == reasons.LOG_INCONSISTENT


def test_a_shrink_and_a_rewind_are_inconsistent(log: Log) -> None:
    remembered = log.note()
    assert check(log, log.proof(1, 2), log.view(head_size=2, remembered=remembered)) == reasons.LOG_INCONSISTENT
    assert check(log, log.proof(1, 3), log.view(head_size=2)) == reasons.LOG_INCONSISTENT  # proof beyond the head


def test_a_missing_or_false_consistency_proof_is_inconsistent(log: Log) -> None:
    assert check(log, log.proof(1, 2), log.view()) == reasons.LOG_INCONSISTENT  # no proof 2 -> 3 fetched
    bad = LogView(log.note(), None, {(2, 3): (b"\x00" * 32,)})
    assert check(log, log.proof(1, 2), bad) == reasons.LOG_INCONSISTENT
    assert check(log, log.proof(1, 2), log.view(remembered=log.note(2), olds=(2,))) is None


def test_the_witness_quorum_and_the_log_signature(log: Log) -> None:
    witness = Ed25519PrivateKey.generate()
    trust = log.trust((witness,), 1)
    assert check(log, log.proof(1), log.view(), trust) == reasons.NOTE_UNVERIFIED  # nobody cosigned
    assert check(log, log.proof(1, witness=witness), log.view(witness=witness), trust) is None
    stranger = Log()  # a checkpoint the pinned key did not sign
    for e in log.entries:
        stranger.add(e)
    forged = json.loads(log.proof(1))
    forged["checkpoint"] = stranger.note().decode().replace(stranger.origin, log.origin)
    assert check(log, canonical(forged), log.view()) == reasons.NOTE_UNVERIFIED


def test_the_head_itself_must_verify(log: Log) -> None:
    assert check(log, log.proof(1), LogView(None, None, {}, "unreachable")) == reasons.LOG_INVALID
    witness = Ed25519PrivateKey.generate()
    assert check(log, log.proof(1, witness=witness), log.view(), log.trust((witness,), 1)) == reasons.NOTE_UNVERIFIED


def _accepted(digest: str, cap: str = "acx-cap:sha256:" + "a" * 64) -> AcceptedCredential:
    return AcceptedCredential(attestation_digest=digest, credential_digest=CRED_DIGEST, issuer=ISSUER,
                              capability_id=cap, benchmark_id="b", benchmark_version="1", mu=30.0, sigma=1.0,
                              games=30, acx_level=27, career_tier="senior", valid_from="2026-12-01T00:00:00Z",
                              credential=LevelCredential.document(credential(cap)), solver="rom", rom_digest=D,
                              benchmark_digest=D)


def test_a_later_issued_entry_of_the_same_key_supersedes(log: Log) -> None:
    view = LogView(log.note(), entries=tuple(enumerate(log.entries)), entries_from=0)
    older, other = _accepted("sha256:" + "e" * 64), _accepted("sha256:" + "f" * 64, "acx-cap:sha256:" + "b" * 64)
    kept, gone = log_superseded([older, other], {older.attestation_digest: (log.origin, 1),
                                                 other.attestation_digest: (log.origin, 1)}, {log.origin: view})
    assert kept == (other,) and [r.codes for r in gone] == [(reasons.SUPERSEDED,)]
    kept, gone = log_superseded([older], {older.attestation_digest: (log.origin, 2)}, {log.origin: view})
    assert kept == (older,) and not gone  # the newest entry of its key


def _trust_file(tmp_path: Path, lg: Log, **fields: Any) -> Path:
    party = {"id": ISSUER, "log": {"origin": lg.origin, "key": lg.trust().key, "url": "127.0.0.1:5000/l"}, **fields}
    path = tmp_path / "trust.json"
    path.write_text(json.dumps({"verifiers": [party]}))
    return path


def _write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "trust.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_trust_file_names_a_log_and_witnesses(tmp_path: Path, log: Log) -> None:
    t = load_trust(_trust_file(tmp_path, log))
    pinned = t.log_for(ISSUER + "#key-1")
    assert pinned is not None and (pinned.origin, pinned.quorum, pinned.witness_keys) == (log.origin, 0, ())
    w = Ed25519PrivateKey.generate()
    vkey = C.Cosigner(wname(w), N.raw_public(w)).vkey()
    t = load_trust(_trust_file(tmp_path, log, witnesses={"keys": [vkey], "quorum": 1}))
    assert t.log_for(ISSUER) is not None and t.log_for(ISSUER).quorum == 1  # type: ignore[union-attr]
    assert log_keys(t.log_for(ISSUER)).witnesses[0].name == wname(w)  # type: ignore[arg-type]
    assert load_trust(_trust_file(tmp_path, log, witnesses={"keys": [vkey]})).log_for(ISSUER).quorum == 1  # type: ignore[union-attr]


@pytest.mark.parametrize("fields, needle", [
    ({"witnesses": {"keys": [], "quorum": 1}}, "quorum is 1"),
    ({"log": {"origin": "other.example/log", "key": "x+00000000+AA==", "url": "r/l"}}, "is its origin"),
    ({"log": {"origin": "o", "key": "not a key", "url": "r/l"}}, "trust file"),
])
def test_bad_log_values_are_one_line(tmp_path: Path, log: Log, fields: dict[str, Any], needle: str) -> None:
    with pytest.raises(UsageError) as exc:
        load_trust(_trust_file(tmp_path, log, **fields)) if "log" not in fields else load_trust(
            _write(tmp_path, {"verifiers": [{"id": ISSUER, **fields}]}))
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_one_witness_key_under_two_names_is_refused_not_counted_twice(tmp_path: Path, log: Log) -> None:
    """Issue 33 item 5: the quorum is a number of distinct keys, so the same key renamed is refused."""
    w, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    first, renamed = (C.Cosigner(n, N.raw_public(w)).vkey() for n in ("witness.example/a", "witness.example/b"))
    with pytest.raises(UsageError) as exc:
        load_trust(_trust_file(tmp_path, log, witnesses={"keys": [first, renamed], "quorum": 2}))
    assert exc.value.exit_code == 2 and "one public key twice" in str(exc.value) and "\n" not in str(exc.value)
    res = cli("resolve", "127.0.0.1:9/none:1", "--trust", tmp_path / "trust.json")
    assert res.exit_code == 2 and "one public key twice" in res.output and "Traceback" not in res.output
    distinct = C.Cosigner("witness.example/b", N.raw_public(other)).vkey()  # two keys: two witnesses
    assert load_trust(_trust_file(tmp_path, log, witnesses={"keys": [first, distinct]})).log_for(
        ISSUER).quorum == 2  # type: ignore[union-attr]


def test_a_vkey_whose_hash_does_not_match_is_refused_before_any_fetch(log: Log) -> None:
    good = log.trust()
    name, kid, rest = good.key.split("+", 2)
    bad = LogTrust(good.origin, f"{name}+{(int(kid, 16) ^ 1):08x}+{rest}", good.url)
    with pytest.raises(UsageError) as exc:
        log_keys(bad)
    assert exc.value.exit_code == 2 and "does not match" in str(exc.value)


def test_a_bad_log_value_is_one_line_and_exit_2_on_the_command_line(tmp_path: Path, log: Log) -> None:
    bad = _write(tmp_path, {"verifiers": [{"id": ISSUER, "log": {"origin": log.origin, "key": "nope", "url": "r/l"}}]})
    res = cli("resolve", "127.0.0.1:9/none:1", "--trust", bad)
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "Traceback" not in res.output, res.output


def test_the_history_read_from_a_published_log_is_bound_to_its_root(tmp_path: Path) -> None:
    """A real TransLog published to an oci: layout: its entries come back; a log host that swaps an entry
    bundle (hiding a newer attempt) is caught against the signed root."""
    key = Ed25519PrivateKey.generate()
    honest, other = TransLog(tmp_path / "a", key), TransLog(tmp_path / "b", key)
    entries = [entry("sha256:" + f"{i:x}" * 64) for i in range(3)]
    honest.append(entries)
    other.append([*entries[:2], entry("sha256:" + "d" * 64)])
    layout = f"oci:{tmp_path / 'layout'}"
    force_publish(honest, layout)
    with open_store(layout) as store:
        reader = LogReader(store)
        head = reader.head().checkpoint
        got, start = read_history(reader, TileReader(head.size, reader.fetch), head.size, head.root, 1)
    assert start == 0 and [e["recordDigest"] for _, e in got] == [e["recordDigest"] for e in entries]
    bundle = "tile/entries/000.p/3"
    force_publish(honest, layout, {bundle: other.read(bundle)})
    with open_store(layout) as store, pytest.raises(LogError):
        reader = LogReader(store)
        read_history(reader, TileReader(head.size, reader.fetch), head.size, head.root, 0)
    tile = "tile/0/000.p/3"  # the bundle and its level-0 tile swapped together: the inclusion path fails
    force_publish(honest, layout, {bundle: other.read(bundle), tile: other.read(tile)})
    with open_store(layout) as store, pytest.raises(LogError):
        reader = LogReader(store)
        read_history(reader, TileReader(head.size, reader.fetch), head.size, head.root, 0)


def test_a_malformed_checkpoint_in_the_proof_is_not_logged(log: Log) -> None:
    doc = json.loads(log.proof(1))
    doc["checkpoint"] = "not a note"
    assert check(log, canonical(doc), log.view()) == reasons.NOT_LOGGED
    assert check(log, log.proof(1), LogView(b"garbage\n\n", None, {})) == reasons.LOG_INVALID
