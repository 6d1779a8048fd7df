"""The inflated credential against every consumer, on a real registry: resolve, policy check, pull --require
and the gateway (pulls and pushes) all reject it ``evidence_mismatch``; ``--no-replay`` is visible.

The attack: ``attest`` issues an honest credential; the SAME trusted verifier key then re-signs it with
mu=40, sigma=1 (a consistent legend) over the original game records, pushed as a proper referrer.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from acx_oci.crypto import dataintegrity
from acx_oci.errors import GatewayDenied
from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, RunningGateway, start_in_thread
from acx_oci.model import level_for, level_result
from acx_oci.model.credential import sign_credential
from acx_oci.oci import MANIFEST_ACCEPT, open_store
from acx_oci.services.consumer import replay as replay_service
from acx_oci.trust import load_identity, load_trust

from ..support.cli import cli
from ..support.policy_world import World, attest, build_world, publish, push_cartridge


def inflate(w: World, out: Path) -> bytes:
    """The honest credential from ``out``, re-signed by the trusted verifier with mu=40, sigma=1."""
    cred = dataintegrity.without_proof(copy.deepcopy(json.loads((out / "credential.json").read_bytes())))
    res = level_result(cred)
    assert res is not None
    level, tier = level_for(40.0, 1.0)
    res.update({"acx:ratingMu": 40.0, "acx:ratingSigma": 1.0, "acx:acxLevel": level, "acx:careerTier": tier})
    res["achievedLevel"] = tier
    ver = load_identity(w.dir / "ver.key")
    return json.dumps(sign_credential(cred, ver, ver.verification_method, str(cred["validFrom"]))).encode()


@pytest.fixture(scope="module")
def world(registry: str, tmp_path_factory: pytest.TempPathFactory) -> World:
    w = build_world(registry, tmp_path_factory.mktemp("world"))
    if "inflated" not in w.digests:
        w.digests["inflated"] = push_cartridge(w, w.dir / "inflated", w.ref("inflated"), "io.github.acme/inflated")
        out = w.dir / "out-inflated"
        attest(w, w.ref("inflated"), out, w.dir / "state-inflated", competence=27, push=False)
        w.attestations["inflated"] = publish(open_store(w.ref("inflated")), out, inflate(w, out)).digest
    return w


@pytest.fixture(scope="module")
def gw(world: World) -> Iterator[RunningGateway]:
    config = GatewayConfig(upstream=f"http://{world.registry}", policy=load_policy(world.policy),
                           trust=load_trust(world.trust), fresh_seconds=0.3)
    running = start_in_thread(config)
    try:
        yield running
    finally:
        running.stop()


def test_resolve_rejects_the_inflated_credential(world: World) -> None:
    res = cli("resolve", world.ref("inflated"), "--trust", world.trust, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["replayed"] is True
    cap = doc["capabilities"][0]
    assert cap["effective"] == "unproven"
    assert cap["rejected"][0]["codes"] == ["evidence_mismatch"]
    message = cap["rejected"][0]["messages"][0]
    assert "acx:ratingMu: the credential says 40" in message and "acx:careerTier: the credential says legend" in message
    text = cli("resolve", world.ref("inflated"), "--trust", world.trust)
    assert "evidence_mismatch" in text.output and "replayed:" in text.output
    # the honest one next door still resolves, replayed
    strong = json.loads(cli("resolve", world.ref("strong"), "--trust", world.trust, "--json").output)
    assert strong["capabilities"][0]["effective"] == "VERIFIED" and strong["replayed"] is True


def test_no_replay_is_weaker_and_shows(world: World) -> None:
    res = cli("resolve", world.ref("inflated"), "--trust", world.trust, "--json", "--no-replay")
    doc = json.loads(res.output)
    assert doc["replayed"] is False and doc["capabilities"][0]["careerTier"] == "legend"
    assert any("--no-replay" in n and "weaker" in n for n in doc["notes"])
    text = cli("resolve", world.ref("inflated"), "--trust", world.trust, "--no-replay").output
    assert "replay is off" in text and "weaker" in text
    assert "WEAKER" in cli("resolve", "--help").output
    assert "WEAKER" in cli("policy", "check", "--help").output
    card = json.loads(cli("agent-card", world.ref("inflated"), "--trust", world.trust, "--no-replay").output)
    assert card["capabilities"]["extensions"][0]["params"]["replayed"] is False


def test_policy_check_rejects_the_inflated_credential(world: World) -> None:
    res = cli("policy", "check", world.ref("inflated"), "--policy", world.policy, "--trust", world.trust, "--json")
    assert res.exit_code == 1, res.output
    verdict = json.loads(res.output)
    assert verdict["allowed"] is False and verdict["replayed"] is True
    assert "evidence_mismatch" in json.dumps(verdict["requirements"])
    off = cli("policy", "check", world.ref("inflated"), "--policy", world.policy, "--trust", world.trust, "--json",
              "--no-replay")
    assert off.exit_code == 0 and json.loads(off.output)["replayed"] is False


def test_pull_require_rejects_the_inflated_credential(world: World, tmp_path: Path) -> None:
    res = cli("pull", world.ref("inflated"), "-o", tmp_path / "out", "--trust", world.trust,
              "--require", "build-dag>=distinguished")
    assert res.exit_code == 1, res.output
    assert "requirement not met" in res.output and not (tmp_path / "out").exists()
    ok = cli("pull", world.ref("strong"), "-o", tmp_path / "strong", "--trust", world.trust,
             "--require", "build-dag>=senior")
    assert ok.exit_code == 0, ok.output


def test_agent_card_does_not_show_the_inflated_level(world: World) -> None:
    card = json.loads(cli("agent-card", world.ref("inflated"), "--trust", world.trust).output)
    assert "legend" not in json.dumps(card["skills"])
    assert card["capabilities"]["extensions"][0]["params"]["replayed"] is True


def test_gateway_denies_pulls_and_refuses_pushes_of_the_inflated_credential(world: World, gw: RunningGateway) -> None:
    resp = httpx.get(f"http://{gw.address}/v2/acx/inflated/manifests/1", headers={"Accept": MANIFEST_ACCEPT})
    assert resp.status_code == 403, resp.text
    body = resp.json()["errors"][0]
    assert body["code"] == "DENIED" and "evidence_mismatch" in body["detail"]["unmet"][0]["codes"]
    assert httpx.get(f"http://{gw.address}/v2/acx/strong/manifests/1",
                     headers={"Accept": MANIFEST_ACCEPT}).status_code == 200
    # pushing the inflated attestation through the gateway: refused before the upstream sees it
    gw_ref = f"{gw.address}/lab/inflated:1"
    push_cartridge(world, world.dir / "lab-inflated", gw_ref, "io.github.acme/lab-inflated")
    out = world.dir / "out-lab-inflated"
    replay_service.clear_cache()
    attest(world, gw_ref, out, world.dir / "state-lab-inflated", competence=27, push=False)
    store = open_store(gw_ref)
    with pytest.raises(GatewayDenied) as refused:  # the gateway's policy: exit 1, not a registry failure
        publish(store, out, inflate(world, out))
    assert "HTTP 403" in str(refused.value) and "evidence_mismatch" in str(refused.value)
    publish(store, out, status=False)  # the honest one goes through


def test_gateway_no_replay_option(world: World) -> None:
    config = GatewayConfig(upstream=f"http://{world.registry}", policy=load_policy(world.policy),
                           trust=load_trust(world.trust), fresh_seconds=0.3, replay=False)
    running = start_in_thread(config)
    try:
        resp = httpx.get(f"http://{running.address}/v2/acx/inflated/manifests/1", headers={"Accept": MANIFEST_ACCEPT})
        assert resp.status_code == 200  # believed as signed: what --no-replay means
    finally:
        running.stop()
    assert "WEAKER" in cli("gateway", "--help").output
