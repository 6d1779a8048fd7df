"""The log check end to end on a real Distribution registry: real `attest` credentials, a real TransLog
published as OCI artifacts, the log proof as a layer of the attestation (tests/support/logged.py plays the
producer until `attest --log` lands), `resolve` through the CLI with a real consumer cache, and the real
sigsum-witness."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from acx_oci.crypto import sha256_digest
from acx_oci.evaluation import load_policy, log_check
from acx_oci.gateway import GatewayConfig, start_in_thread
from acx_oci.oci import MANIFEST_ACCEPT, open_store
from acx_oci.services.artifacts import publish_status_list
from acx_oci.services.verifier.log_tree import TransLog, Witness
from acx_oci.tlog import LogProof, raw_public
from acx_oci.tlog.checkpoint import sigsum_cosigner
from acx_oci.trust import load_identity, load_trust

from ..support.cli import cli
from ..support.logged import (
    attempt_entry,
    force_publish,
    log_entry,
    open_log,
    pin,
    publish,
    push_with_proof,
    write_trust,
)
from ..support.policy_world import World, attest, push_cartridge
from ..support.sigsum_witness import sigsum_witness

REQUIRE = "build-dag>=1"


@pytest.fixture(scope="module")
def world(registry: str, tmp_path_factory: pytest.TempPathFactory) -> World:
    d = tmp_path_factory.mktemp("logworld")
    pub = cli("keygen", d / "pub").output.strip().splitlines()[-1]
    ver = cli("keygen", d / "ver").output.strip().splitlines()[-1]
    cli("benchmark", "demo", d / "bench")
    bench = json.loads(cli("benchmark", "push", d / "bench", f"{registry}/logw/bench", "--seal-to",
                           d / "ver.did.json", "--json").output)
    trust = d / "trust.json"
    trust.write_text(json.dumps({
        "publishers": [{"id": pub}], "verifiers": [{"id": ver}],
        "benchmarks": [{"id": "acx-bench-dag-de", "version": "2026.07.1", "digest": bench["benchmarkDigest"],
                        "heldOutSliceDigest": bench["heldOutSliceDigest"]}],
        "solvers": ["rom", "reference"]}))
    return World(registry, d, pub, ver, f"{registry}/logw/bench@{bench['manifestDigest']}", trust, d / "policy.yaml")


@dataclass
class Logged:
    """Cartridge ``ref`` with an attestation without a proof (``unlogged``); its credential is entry 0 of the
    log in ``state``, published at ``log_ref``, and ``proof`` proves it (pushed by :func:`push_logged`)."""

    ref: str
    out: Path
    state: Path
    log_ref: str
    cart_id: str
    unlogged: str
    proof: LogProof


@pytest.fixture(scope="module")
def logged(world: World, tmp_path_factory: pytest.TempPathFactory) -> Logged:
    d = tmp_path_factory.mktemp("logged")
    ref, cart_id = f"{world.registry}/logw/agent:1", "io.github.acme/logged-agent"
    push_cartridge(world, d / "agent", ref, cart_id)
    out = d / "out"
    attest(world, ref, out, d / "vstate", push=False)
    with open_store(ref) as store:
        unlogged = push_with_proof(store, out, None).digest
    log = open_log(d / "log", world.dir / "ver.key")
    proof = log_entry(log, attempt_entry((out / "credential.json").read_bytes(), cart_id))
    log_ref = f"{world.registry}/logw/log"
    publish(log, log_ref)
    return Logged(ref, out, d / "log", log_ref, cart_id, unlogged, proof)


def push_logged(logged: Logged) -> str:
    """Push the credential again, now with its proof layer (the same bytes each time: idempotent)."""
    with open_store(logged.ref) as store:
        return push_with_proof(store, logged.out, logged.proof, status=False).digest


def resolve(ref: str, trust: Path, cache: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    res = cli("resolve", ref, "--trust", trust, "--require", REQUIRE, "--status-cache", cache, "--json", *extra)
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.output[res.output.index("{"):])


def codes(doc: dict[str, Any]) -> set[str]:
    return {c for cap in doc["capabilities"] for r in cap["rejected"] for c in r["codes"]}


def test_not_logged_then_logged_then_no_log(world: World, logged: Logged, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    log = open_log(logged.state, world.dir / "ver.key")
    trust = write_trust(world.trust, tmp_path / "trust.json", world.verifier_did, pin(log, logged.log_ref))
    # only the attestation without a proof so far: not logged, exit 1; --no-log believes it and says so
    code, doc = resolve(logged.ref, trust, tmp_path / "c0")
    assert code == 1 and codes(doc) == {"not_logged"}, doc
    code, doc = resolve(logged.ref, trust, tmp_path / "c0", "--no-log")
    assert code == 0 and any("--no-log" in n for n in doc["notes"]), doc["notes"]
    human = cli("resolve", logged.ref, "--trust", trust, "--no-log", "--status-cache", tmp_path / "c0").output
    assert "log checking is off (--no-log)" in human
    _other_consumers(world, logged, trust, tmp_path)
    # the same credential pushed again with its proof layer: VERIFIED. The log orders the walk, so the logged
    # copy is tried first and decides; the proof-less copy is judged with its own evidence and named for what it
    # lacks (not logged), whichever of the two was fetched first
    push_logged(logged)
    proof_file = tmp_path / "proof.json"
    proof_file.write_bytes(logged.proof.to_bytes())
    assert _vc_log_check(logged, trust, tmp_path, "--log-proof", proof_file) == (True, "ok", False)
    parsed: list[str] = []  # the pinned log key is parsed once, at the door, for every credential judged
    real = log_check.verifier_from_vkey
    monkeypatch.setattr(log_check, "verifier_from_vkey", lambda vkey: parsed.append(vkey) or real(vkey))
    code, doc = resolve(logged.ref, trust, tmp_path / "c1")
    monkeypatch.undo()
    cap = doc["capabilities"][0]
    assert code == 0 and cap["effective"] == "VERIFIED", doc
    assert len(parsed) == 1 and len(cap["rejected"]) + 1 >= 2, (parsed, cap)
    assert [r["codes"] for r in cap["rejected"] if r["digest"] == logged.unlogged] == [["not_logged"]]
    human = cli("resolve", logged.ref, "--trust", trust, "--status-cache", tmp_path / "c1").output
    assert "level=" in human and "unproven" not in human and "not_logged" in human, human
    # a pinned key whose hash does not match it: one line, exit 2
    doc = json.loads(trust.read_text())
    key = doc["verifiers"][0]["log"]["key"]
    doc["verifiers"][0]["log"]["key"] = key[:-12] + ("A" if key[-12] != "A" else "B") + key[-11:]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    res = cli("resolve", logged.ref, "--trust", tmp_path / "bad.json")
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "log" in res.output, res.output
    # without log: in the trust file nothing changes: the two copies are judged as before (one decides)
    code, doc = resolve(logged.ref, world.trust, tmp_path / "c2")
    assert code == 0 and codes(doc) <= {"superseded"}, doc


def _vc_log_check(logged: Logged, trust: Path, tmp_path: Path, *extra: Any) -> tuple[bool, str, bool]:
    res = cli("vc", "verify", logged.out / "credential.json", "--trust", trust, "--status-list",
              logged.out / "status-list.json", "--status-cache", tmp_path / "vc-cache", "--json", *extra)
    checks = [c for c in json.loads(res.output)["checks"] if c["name"] == "transparency_log"]
    assert len(checks) == 1, res.output
    return checks[0]["ok"], checks[0]["code"], checks[0]["skipped"]


def _other_consumers(world: World, logged: Logged, trust: Path, tmp_path: Path) -> None:
    """pull --require, policy check, vc verify and the gateway refuse the unlogged credential; --no-log (and
    the gateway's log=False) accept it."""
    cache = ("--status-cache", tmp_path / "c-other")
    pulled = cli("pull", logged.ref, "-o", tmp_path / "p1", "--trust", trust, "--require", REQUIRE, *cache)
    assert pulled.exit_code == 1 and "not_logged" in pulled.output, pulled.output
    assert cli("pull", logged.ref, "-o", tmp_path / "p2", "--trust", trust, "--require", REQUIRE, "--no-log",
               *cache).exit_code == 0
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: acx.dev/policy/v1\nrules:\n  - repositories: [\"logw/*\"]\n    require:\n"
                      "      capabilities:\n        - {taskType: build-dag, minLevel: 1}\n")
    checked = cli("policy", "check", logged.ref, "--policy", policy, "--trust", trust, *cache)
    assert checked.exit_code == 1 and "not_logged" in checked.output, checked.output
    assert cli("policy", "check", logged.ref, "--policy", policy, "--trust", trust, "--no-log", *cache).exit_code == 0
    assert _vc_log_check(logged, trust, tmp_path) == (False, "not_logged", False)
    assert _vc_log_check(logged, trust, tmp_path, "--no-log") == (True, "skipped", True)
    digest = json.loads(cli("resolve", logged.ref, "--trust", trust, "--json", *cache).output)["manifestDigest"]
    for log, status in ((True, 403), (False, 200)):
        running = start_in_thread(GatewayConfig(upstream=f"http://{world.registry}", policy=load_policy(policy),
                                                trust=load_trust(trust), status_cache_dir=tmp_path / "gw", log=log))
        try:
            url = f"http://{running.address}/v2/logw/agent/manifests/{digest}"
            resp = httpx.get(url, headers={"Accept": MANIFEST_ACCEPT})
            assert resp.status_code == status and (log is False or "not_logged" in resp.text), resp.text
        finally:
            running.stop()


OTHER = {"kind": "status-list", "time": "2026-12-01T00:00:00Z", "url": "https://v.example/s/1", "sequence": 1}


def test_a_split_view_and_a_shrink_are_log_inconsistent(world: World, logged: Logged, tmp_path: Path) -> None:
    push_logged(logged)
    key = world.dir / "ver.key"
    honest_state, fork_state = tmp_path / "honest", tmp_path / "fork"
    shutil.copytree(logged.state, honest_state)
    shutil.copytree(logged.state, fork_state)
    honest, fork = open_log(honest_state, key), open_log(fork_state, key)
    honest.append([{**OTHER, "digest": "sha256:" + "1" * 64}])
    fork.append([{**OTHER, "digest": "sha256:" + "2" * 64}])  # same size, signed by the same key, other root
    assert honest.size == fork.size and honest.tree.root() != fork.tree.root()
    log_ref = f"{world.registry}/logw/split"
    trust = write_trust(world.trust, tmp_path / "trust.json", world.verifier_did, pin(honest, log_ref))
    cache = tmp_path / "cache"
    force_publish(honest, log_ref)
    assert resolve(logged.ref, trust, cache)[0] == 0  # remembers the honest head
    force_publish(fork, log_ref)
    code, doc = resolve(logged.ref, trust, cache)
    assert code == 1 and "log_inconsistent" in codes(doc) and "forked" in json.dumps(doc), doc
    # a first-time consumer cannot tell (both branches hold the entry); only one that saw the other head can
    assert resolve(logged.ref, trust, tmp_path / "fresh")[0] == 0

    # smaller after larger: the honest log grows, is seen, then its older head is served again
    before = tmp_path / "before"
    shutil.copytree(honest_state, before)
    honest.append([{**OTHER, "sequence": 2, "digest": "sha256:" + "3" * 64}])
    shrink_ref = f"{world.registry}/logw/shrink"
    trust = write_trust(world.trust, tmp_path / "trust2.json", world.verifier_did, pin(honest, shrink_ref))
    force_publish(honest, shrink_ref)
    assert resolve(logged.ref, trust, cache)[0] == 0
    force_publish(open_log(before, key), shrink_ref)
    code, doc = resolve(logged.ref, trust, cache)
    assert code == 1 and "log_inconsistent" in codes(doc) and "shrank" in json.dumps(doc), doc


def test_the_witness_refuses_the_fork_and_quorum_one_refuses_its_checkpoint(world: World, logged: Logged,
                                                                               tmp_path: Path) -> None:
    key = load_identity(world.dir / "ver.key").private
    ref = f"{world.registry}/logw/witnessed-agent:1"
    push_cartridge(world, tmp_path / "agent", ref, logged.cart_id)
    out = tmp_path / "out"
    attest(world, ref, out, tmp_path / "vstate", push=False)
    with sigsum_witness(tmp_path, key) as w:
        cosigner = sigsum_cosigner(raw_public(w.key))
        witness = Witness(w.url, cosigner)
        log = TransLog(tmp_path / "wlog", key, witnesses=[witness])
        proof = log_entry(log, attempt_entry((out / "credential.json").read_bytes(), logged.cart_id))
        assert len(proof.checkpoint.splitlines()) == 6  # 3 text lines, a blank, the log's and the witness's signatures
        shutil.copytree(tmp_path / "wlog", tmp_path / "wfork")  # the log at size 1
        assert log.append([{**OTHER, "digest": "sha256:" + "1" * 64}]).cosigned == (w.url,)
        log_ref = f"{world.registry}/logw/witnessed"
        publish(log, log_ref)
        with open_store(ref) as store:
            push_with_proof(store, out, proof)
        trust = write_trust(world.trust, tmp_path / "trust.json", world.verifier_did,
                            pin(log, log_ref, [cosigner.vkey()], 1))
        assert resolve(ref, trust, tmp_path / "c")[0] == 0  # cosigned by the witness: quorum 1 met
        # the fork: the same key signs another history of size 2; the witness has seen size 2 and refuses
        forked = TransLog(tmp_path / "wfork", key, witnesses=[witness])
        done = forked.append([{**OTHER, "digest": "sha256:" + "2" * 64}])
        assert done.cosigned == () and done.refused, done
        force_publish(forked, log_ref)
        code, doc = resolve(ref, trust, tmp_path / "c-fresh")
        assert code == 1 and "note_unverified" in codes(doc), doc
        code, doc = resolve(ref, trust, tmp_path / "c")
        assert code == 1 and codes(doc) & {"note_unverified", "log_inconsistent"}, doc


def test_deleting_the_newer_credential_leaves_the_older_superseded(world: World, tmp_path: Path) -> None:
    """The publisher deletes the newer attestation and puts the older, pre-revocation status list back: a
    first-time consumer without the log believes the older level again; with the log it is superseded."""
    ref, cart_id = f"{world.registry}/logw/supersede:1", "io.github.acme/supersede-agent"
    push_cartridge(world, tmp_path / "agent", ref, cart_id)
    state, log_ref = tmp_path / "vstate", f"{world.registry}/logw/supersede-log"
    log = open_log(tmp_path / "log", world.dir / "ver.key")
    outs, digests = [], []
    for n, competence in enumerate((33, 22)):
        out = tmp_path / f"run{n}"
        attest(world, ref, out, state, competence=competence, push=False)
        proof = log_entry(log, attempt_entry((out / "credential.json").read_bytes(), cart_id))
        publish(log, log_ref)
        with open_store(ref) as store:
            digests.append(push_with_proof(store, out, proof).digest)
        outs.append(out)
    trust = write_trust(world.trust, tmp_path / "trust.json", world.verifier_did, pin(log, log_ref))
    code, doc = resolve(ref, trust, tmp_path / "c0")
    assert code == 0 and doc["capabilities"][0]["attestationDigest"] == digests[1], doc
    url = f"http://{world.registry}/v2/logw/supersede/manifests/{digests[1]}"
    assert httpx.delete(url, headers={"Accept": MANIFEST_ACCEPT}).status_code == 202
    with open_store(ref) as store:  # the list from before the newer credential revoked the older one
        publish_status_list(store, json.loads((outs[0] / "status-list.json").read_bytes()))
    code, doc = resolve(ref, trust, tmp_path / "c1", "--no-log")
    assert code == 0 and doc["capabilities"][0]["attestationDigest"] == digests[0], doc  # resurrected
    code, doc = resolve(ref, trust, tmp_path / "c2")
    cap = doc["capabilities"][0]
    assert code == 1 and cap["effective"] == "unproven", doc
    older = [r for r in cap["rejected"] if r["digest"] == digests[0]]
    assert older and older[0]["codes"] == ["superseded"] and "the log" in older[0]["messages"][0], cap["rejected"]
    # the attempt history comes from the log too: the deleted newer attempt still counts
    attempts = cap["attempts"]
    assert (attempts["total"], attempts["issued"]) == (2, 2), attempts
    assert [e["source"] for e in attempts["entries"]] == ["log", "log"]
    assert attempts["entries"][1]["digest"] == sha256_digest((outs[1] / "credential.json").read_bytes())
    assert resolve(ref, trust, tmp_path / "c3", "--require", "build-dag>=1@maxAttempts=1/30d")[0] == 1
