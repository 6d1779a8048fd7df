"""The producer's side of the transparency log: attest, revoke and status-refresh append, witness, publish, prove.

Real parts only: the session's Distribution registry holds the cartridge and, in a repository of its own,
the log; the real sigsum-witness (sigsum-go 0.11.2) cosigns every checkpoint on loopback; the proof is
read back from the attestation manifest and checked with ``tlog.proof.check_proof``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import sha256_digest
from acx_oci.errors import NoteUnverified, UsageError
from acx_oci.oci import MEDIA_ATTEMPT_RECORD, MEDIA_VC, StoreOptions, open_store, parse_reference
from acx_oci.services.artifacts import LogReader
from acx_oci.services.consumer import verify_log
from acx_oci.services.verifier import AttestRequest, Issued, LogOptions, RegistryOptions, SandboxOptions
from acx_oci.services.verifier.attest import attest
from acx_oci.services.verifier.log import refuse_same_repository
from acx_oci.solvers import ReferenceSolver
from acx_oci.tlog import Cosigner, Verifier, ed25519_verifier, raw_public, sigsum_origin
from acx_oci.tlog import proof as P
from acx_oci.tlog.checkpoint import sigsum_cosigner
from acx_oci.trust import load_identity

from ..support.attest_world import World, build_attest_world
from ..support.cli import cli
from ..support.jsondoc import check_document
from ..support.registry import Registry, registry_binary, start_registry
from ..support.registry_restart import kill, restart
from ..support.sigsum_witness import RunningWitness, sigsum_witness


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, registry: str) -> World:
    return build_attest_world(tmp_path_factory.mktemp("logattest"), registry)


@pytest.fixture
def witness(tmp_path: Path, world: World) -> Iterator[RunningWitness]:
    key = load_identity(f"{world.verifier}.key", did=world.verifier_did).private
    with sigsum_witness(tmp_path, key) as w:
        yield w


def _note_key(w: World) -> Verifier:
    """The verifier's note key, as a trust file's ``log.key`` names it (default Sigsum origin)."""
    public = raw_public(load_identity(f"{w.verifier}.key", did=w.verifier_did).private)
    return ed25519_verifier(sigsum_origin(public), public)


def _cosigner(wit: RunningWitness) -> Cosigner:
    return sigsum_cosigner(raw_public(wit.key))


def _attest(w: World, out: Path, state: Path, *extra: str, competence: str = "33",
            code: int = 0) -> dict[str, Any]:
    games = ("--games", "50") if code == 1 else ()  # the weak agent: too few games for sigma < 1.5
    res = cli("attest", w.cart, "--benchmark", w.bench, "--key", f"{w.verifier}.key", "--issuer", w.verifier_did,
              "--state", state, "-o", out, "--competence", competence, "--cooldown", "0",
              "--json", *games, *extra)
    return check_document("attest", res.output, code)


def _layers(w: World, digest: str) -> dict[str, bytes]:
    """The referrer's layers by media type (one each here)."""
    with open_store(parse_reference(w.cart).with_digest(digest), StoreOptions()) as store:
        manifest = store.fetch_manifest(digest)
        return {d.media_type: store.fetch_blob(d.digest, 1 << 24, size=d.size) for d in manifest.layers
                if d.media_type in (P.MEDIA_TYPE, MEDIA_VC, MEDIA_ATTEMPT_RECORD)}


def _reader(repo: str) -> LogReader:
    return LogReader(open_store(parse_reference(repo), StoreOptions()))


def test_attest_logs_the_attempt_and_the_attestation_carries_a_cosigned_proof(
        world: World, witness: RunningWitness, tmp_path: Path, registry: str) -> None:
    repo = f"{registry}/verifier/log-one"
    cosigner = _cosigner(witness)
    out = _attest(world, tmp_path / "out", tmp_path / "state", "--log", repo,
                  "--witness", f"{witness.url}={cosigner.vkey()}")
    log = out["log"]
    assert out["issued"] and log["index"] == 0 and log["checkpointSize"] == 2  # the attempt and its status list
    assert log["cosigned"] == [witness.url] and log["refused"] == [] and log["published"] is True
    assert log["key"] == _note_key(world).vkey() and log["origin"] == _note_key(world).name
    layers = _layers(world, out["attestationDigest"])
    raw = layers[P.MEDIA_TYPE]
    assert raw == (tmp_path / "out" / "log-proof.json").read_bytes()
    noted = json.loads((tmp_path / "out" / "result.json").read_text())["log"]
    assert (noted["index"], noted["checkpointSize"], noted["repository"]) == (0, 2, repo)
    proof = P.parse_proof(raw)
    cosigned = P.check_proof(proof, _note_key(world), [cosigner], 1)
    assert cosigned.checkpoint.size == 2 and [c for c, _ in cosigned.witnesses] == [cosigner]
    entry, credential = proof.entry, json.loads(layers[MEDIA_VC])
    result = next(r for r in credential["credentialSubject"]["result"] if "acx:acxLevel" in r)
    assert entry["recordDigest"] == sha256_digest(layers[MEDIA_VC]) and entry["verdict"] == "issued"
    assert (entry["romDigest"], entry["benchmarkDigest"], entry["capability"]) == (
        result["acx:cartridgeRomDigest"], result["acx:benchmarkDigest"], result["acx:capabilityId"])
    assert entry["issuer"] == credential["issuer"]["id"] == world.verifier_did
    assert entry["cartridgeId"] == "io.example/dag-agent" and entry["level"] == out["acxLevel"]
    # the log's repository serves the same checkpoint, cosigned, and a quorum of 2 of 1 witness fails
    reader = _reader(repo)
    assert reader.verify(_note_key(world), [cosigner], 1).checkpoint.size == 2
    with pytest.raises(NoteUnverified):
        P.check_proof(proof, _note_key(world), [cosigner, sigsum_cosigner(b"\1" * 32)], 2)
    # the credential in the proof was appended before the push: the log's copy of the entry is the same leaf
    assert reader.prove(0, proof.leaf(), cosigned.checkpoint)[0] == list(proof.inclusion)


def test_three_attests_and_a_revoke_grow_a_log_the_witness_cosigns_throughout(
        world: World, witness: RunningWitness, tmp_path: Path, registry: str) -> None:
    repo = f"{registry}/verifier/log-many"
    cosigner = _cosigner(witness)
    state = tmp_path / "state"
    state.mkdir()  # the log named in the state's config, not by flags
    (state / "config.json").write_text(json.dumps(
        {"log": {"repository": repo, "witnesses": [{"url": witness.url, "key": cosigner.vkey()}]}}))
    key, saved, sizes = _note_key(world), None, []
    runs = [("a", "33", 0), ("b", "14", 1), ("c", "34", 0)]  # issued, not issued, issued (supersedes a)
    for name, competence, code in runs:
        out = _attest(world, tmp_path / name, state, competence=competence, code=code)
        sizes.append(out["log"]["checkpointSize"])
        assert out["log"]["cosigned"] == [witness.url], out["log"]
        kind = MEDIA_VC if code == 0 else MEDIA_ATTEMPT_RECORD
        layers = _layers(world, out["attestationDigest"])
        proof = P.parse_proof(layers[P.MEDIA_TYPE])
        assert proof.entry["recordDigest"] == sha256_digest(layers[kind])
        assert proof.entry["verdict"] == ("issued" if code == 0 else "not-issued")
        P.check_proof(proof, key, [cosigner], 1)
        report = verify_log(_reader(repo), key, since=saved, witnesses=[cosigner], quorum=1)
        # c's superseding republication of a's list is appended after c's proof: the log is one longer
        assert report.checkpoint.size == sizes[-1] + (name == "c") and (saved is None or report.since is not None)
        saved = _reader(repo).head().note
    res = cli("revoke", _attest_digest(tmp_path / "c"), "--key", f"{world.verifier}.key", "--issuer",
              world.verifier_did, "--state", state, "--json")
    revoked = check_document("revoke", res.output, 0)["log"]
    assert revoked["cosigned"] == [witness.url] and revoked["checkpointSize"] > sizes[-1]
    # a: attempt + list; b: attempt; c: attempt + list (+ the superseding republication of a's list); revoke: list
    assert sizes == [2, 3, 5] and revoked["checkpointSize"] == 7
    report = verify_log(_reader(repo), key, since=saved, witnesses=[cosigner], quorum=1)
    kinds = [e["kind"] for _, e in report.entries]
    assert kinds == ["attempt", "status-list", "attempt", "attempt", "status-list", "status-list", "status-list"]
    lists = [e for _, e in report.entries if e["kind"] == "status-list"]
    assert [e["sequence"] for e in lists] == sorted(e["sequence"] for e in lists)  # each re-sign a new sequence
    # status-refresh: one entry per re-signed list (one list here), cosigned, the log consistent with before
    saved = _reader(repo).head().note
    res = cli("status-refresh", "--key", f"{world.verifier}.key", "--issuer", world.verifier_did, "--state", state,
              "--json")
    (listed,) = check_document("status-refresh", res.output, 0)["lists"]
    assert listed["log"]["checkpointSize"] == 8 and listed["log"]["cosigned"] == [witness.url]
    report = verify_log(_reader(repo), key, since=saved, witnesses=[cosigner], quorum=1)
    (_, last) = report.entries[-1]
    assert report.since == 7 and last["kind"] == "status-list" and last["sequence"] > lists[-1]["sequence"]
    assert last["url"] == listed["statusList"]
    # and revoke refuses a log in a repository that holds the state's status lists (the cartridge's)
    bad = cli("revoke", _attest_digest(tmp_path / "a"), "--key", f"{world.verifier}.key", "--issuer",
              world.verifier_did, "--state", state, "--log", str(parse_reference(world.cart).with_tag(None)))
    assert bad.exit_code == 2 and "cartridge's repository" in bad.output and len(bad.output.splitlines()) == 1


def _attest_digest(out: Path) -> str:
    return str(json.loads((out / "result.json").read_text())["attestationDigest"])


def test_log_in_the_cartridge_repository_is_refused(world: World, tmp_path: Path) -> None:
    repo = parse_reference(world.cart).with_tag(None)
    res = cli("attest", world.cart, "--benchmark", world.bench, "--key", f"{world.verifier}.key", "--issuer",
              world.verifier_did, "--state", tmp_path / "state", "-o", tmp_path / "out", "--competence", "33",
              "--log", str(repo))
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert "cartridge's repository" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "out" / "result.json").exists()  # refused before any game


def test_publish_republishes_the_same_proof_and_an_unreachable_witness_is_named(
        world: World, tmp_path: Path, registry: str) -> None:
    repo = f"{registry}/verifier/log-publish"
    nobody = sigsum_cosigner(b"\2" * 32)
    state, run = tmp_path / "state", tmp_path / "out"
    out = _attest(world, run, state, "--log", repo, "--witness", f"http://127.0.0.1:1={nobody.vkey()}")
    assert out["issued"] and out["log"]["cosigned"] == [] and len(out["log"]["refused"]) == 1
    first = _layers(world, out["attestationDigest"])[P.MEDIA_TYPE]
    proof = P.parse_proof(first)
    P.check_proof(proof, _note_key(world), [nobody], 0)  # logged; only a consumer's quorum of 0 accepts it
    with pytest.raises(NoteUnverified):
        P.check_proof(proof, _note_key(world), [nobody], 1)
    res = cli("attest", "--publish", run, "--key", f"{world.verifier}.key", "--state", state, "--log", repo,
              "--json")
    assert res.exit_code == 0, res.output
    again = json.loads(res.output)
    assert again["attestationDigest"] == out["attestationDigest"]
    assert _layers(world, again["attestationDigest"])[P.MEDIA_TYPE] == first == (run / "log-proof.json").read_bytes()
    # the re-signed status list was logged too: the log grew by one, and is served
    assert _reader(repo).head().checkpoint.size == 3
    # --no-push still appends (the verifier's record), publishes nothing, and says so in its text output
    res = cli("attest", world.cart, "--benchmark", world.bench, "--key", f"{world.verifier}.key", "--issuer",
              world.verifier_did, "--state", state, "-o", tmp_path / "quiet", "--competence", "33", "--cooldown", "0",
              "--log", repo, "--no-push")
    assert res.exit_code == 0, res.output
    assert f"log: entry 3, checkpoint size 5, NOT yet published to {repo}" in res.output
    assert f"log key: {_note_key(world).vkey()}" in res.output
    assert _reader(repo).head().checkpoint.size == 3 and (tmp_path / "quiet" / "log-proof.json").is_file()


@pytest.fixture
def own_registry() -> Iterator[list[Registry]]:
    """A registry this test may kill; a list so the restarted process is the one stopped at the end."""
    if registry_binary() is None:
        pytest.skip("docker-registry not installed")
    regs = [start_registry()]
    try:
        yield regs
    finally:
        regs[-1].stop()


def test_the_attempt_is_logged_before_the_publishers_registry_sees_a_byte(
        own_registry: list[Registry], tmp_path: Path) -> None:
    reg = own_registry[0]
    w = build_attest_world(tmp_path, reg.host)
    ident = load_identity(f"{w.verifier}.key", did=w.verifier_did)
    out, state, repo = tmp_path / "out", tmp_path / "state", f"oci:{tmp_path / 'log'}"  # the embedded layout

    killed: list[bool] = []

    def progress(done: int, total: int, text: str) -> None:
        if done == total and not text.startswith("uploaded") and not killed:
            kill(reg)  # every game played, nothing pushed: the publisher's registry is gone
            killed.append(True)

    outcome = attest(AttestRequest(
        cartridge_ref=w.cart, benchmark_ref=w.bench, verifier=ident, solver=ReferenceSolver(33), out_dir=out,
        state_dir=state, sandbox=SandboxOptions(secret_paths=(Path(f"{w.verifier}.key"),)), progress=progress,
        registry=RegistryOptions(store_options=StoreOptions(timeout=3), log=LogOptions(repo))))
    assert killed and isinstance(outcome, Issued) and outcome.exit_code == 3 and outcome.attestation_digest is None
    assert outcome.publication_error and f"--log {repo}" in outcome.publication_error  # the retry names the log
    assert outcome.logged is not None and outcome.logged.published and outcome.logged.size == 2
    report = verify_log(_reader(repo), _note_key(w))
    (_, entry), _ = report.entries
    assert entry["recordDigest"] == sha256_digest((out / "credential.json").read_bytes())
    own_registry.append(restart(reg))
    res = cli("attest", "--publish", out, "--key", f"{w.verifier}.key", "--state", state, "--log", repo, "--json")
    assert res.exit_code == 0, res.output
    pushed = json.loads(res.output)["attestationDigest"]
    assert _layers(w, pushed)[P.MEDIA_TYPE] == (out / "log-proof.json").read_bytes()
    assert P.parse_proof((out / "log-proof.json").read_bytes()).entry == entry
    assert verify_log(_reader(repo), _note_key(w)).checkpoint.size == 3  # and the list it re-signed


def test_the_same_repository_is_recognised_however_it_is_spelt(tmp_path: Path) -> None:
    log = LogOptions(f"oci:{tmp_path / 'a' / '..' / 'log'}")
    with pytest.raises(UsageError, match="cartridge's repository"):
        refuse_same_repository(log, f"oci:{tmp_path / 'log'}:1.0.0")
    refuse_same_repository(log, f"oci:{tmp_path / 'cart'}:1.0.0")  # another layout
    refuse_same_repository(log, "registry.example/acme/log")  # a registry
    remote = LogOptions("Registry.Example/verifier/log")
    with pytest.raises(UsageError):
        refuse_same_repository(remote, "registry.example/verifier/log@sha256:" + "0" * 64)
    refuse_same_repository(remote, "registry.example/acme/dag-agent:1.0.0")
