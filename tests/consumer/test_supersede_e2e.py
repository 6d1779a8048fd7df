"""Delete-the-newer (issue 23 item 2) on a real registry: two `attest` runs of one ROM by one verifier, the
newer one's attestation manifest DELETEd by the publisher; the older level is not VERIFIED again, neither
by `resolve --require` nor by `pull --require` through the gateway."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from acx_oci.crypto import sha256_digest
from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, RunningGateway, start_in_thread
from acx_oci.oci import MANIFEST_ACCEPT
from acx_oci.trust import load_trust

from ..support.cli import cli
from ..support.policy_world import World, attest, build_world, push_cartridge


@pytest.fixture(scope="module")
def world(registry: str, tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(registry, tmp_path_factory.mktemp("world-distribution"))


@pytest.fixture(scope="module")
def gw(world: World) -> Iterator[RunningGateway]:
    config = GatewayConfig(upstream=f"http://{world.registry}", policy=load_policy(world.policy),
                           trust=load_trust(world.trust), fresh_seconds=0.3)
    running = start_in_thread(config)
    try:
        yield running
    finally:
        running.stop()


def resolve(world: World, ref: str, *extra: str) -> tuple[int, dict[str, object]]:
    res = cli("resolve", ref, "--trust", world.trust, "--json", *extra)
    return res.exit_code, json.loads(res.output[res.output.index("{"):])


def test_deleting_the_newer_credential_does_not_resurrect_the_older(world: World, gw: RunningGateway,
                                                                    tmp_path: Path) -> None:
    ref = f"{world.registry}/lab/supersede:1"  # a repository the gateway's policy does not cover: the client judges
    push_cartridge(world, tmp_path / "agent", ref, "io.github.acme/supersede-agent")
    state = tmp_path / "state"  # one verifier, one ledger: the second run supersedes the first
    first = attest(world, ref, tmp_path / "run1", state, competence=33)
    second = attest(world, ref, tmp_path / "run2", state, competence=22)
    high, low = first["acxLevel"], second["acxLevel"]
    assert high > low
    require = f"build-dag>={high}"
    code, doc = resolve(world, ref)
    caps = doc["capabilities"]
    assert code == 0 and isinstance(caps, list) and caps[0]["acxLevel"] == low
    assert resolve(world, ref, "--require", require)[0] == 1

    # the publisher deletes the newer attestation manifest from its registry
    url = f"http://{world.registry}/v2/lab/supersede/manifests/{second['attestationDigest']}"
    assert httpx.delete(url, headers={"Accept": MANIFEST_ACCEPT}).status_code == 202

    code, doc = resolve(world, ref, "--require", require)
    assert code == 1, doc
    caps = doc["capabilities"]
    assert isinstance(caps, list) and caps[0]["effective"] == "unproven"
    first_digest = sha256_digest((tmp_path / "run1" / "credential.json").read_bytes())
    older = [r for r in caps[0]["rejected"] if r["credentialDigest"] == first_digest]
    assert older and set(older[0]["codes"]) & {"revoked", "superseded"}, caps[0]["rejected"]

    via = f"{gw.address}/lab/supersede:1"
    assert resolve(world, via, "--require", require)[0] == 1
    pulled = cli("pull", via, "-o", tmp_path / "pulled", "--trust", world.trust, "--require", require)
    assert pulled.exit_code == 1, pulled.output
    assert "revoked" in pulled.output or "superseded" in pulled.output
    assert not (tmp_path / "pulled").exists() or not any((tmp_path / "pulled").iterdir())


def test_resolve_lists_the_attempt_history_and_max_attempts_refuses(world: World, gw: RunningGateway,
                                                                     tmp_path: Path) -> None:
    """Three NOT ISSUED runs (their attempt records pushed by attest) and one issued: resolve --json shows
    4 attempts; a bound of 3 in 30 days refuses it, through --require and through a gateway's policy."""
    ref = f"{world.registry}/lab/attempts:1"
    push_cartridge(world, tmp_path / "agent", ref, "io.github.acme/attempts-agent")
    state = tmp_path / "state"
    for n in range(3):
        res = cli("attest", ref, "--benchmark", world.bench_ref, "--key", world.dir / "ver.key", "--issuer",
                  world.verifier_did, "--competence", 15, "--games", 10, "--state", state, "--cooldown", "0", "-o",
                  tmp_path / f"fail{n}", "--json")
        assert res.exit_code == 1 and json.loads(res.output)["issued"] is False, res.output
    attest(world, ref, tmp_path / "ok", state, competence=33)
    code, doc = resolve(world, ref)
    caps = doc["capabilities"]
    assert code == 0 and isinstance(caps, list)
    attempts = caps[0]["attempts"]
    assert (attempts["total"], attempts["issued"], attempts["notIssued"]) == (4, 1, 3), attempts
    assert [e["verdict"] for e in attempts["entries"]] == ["not-issued"] * 3 + ["issued"]
    assert all(e["issuer"] == world.verifier_did for e in attempts["entries"])
    human = cli("resolve", ref, "--trust", world.trust).output
    assert f"4 attempts by {world.verifier_did}: 1 issued, 3 not issued" in human

    code, doc = resolve(world, ref, "--require", "build-dag>=1@maxAttempts=3/30d")
    assert code == 1 and "too_many_attempts" in json.dumps(doc["requirements"])
    assert resolve(world, ref, "--require", "build-dag>=1@maxAttempts=4/30d")[0] == 0

    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: acx.dev/policy/v1\nrules:\n  - repositories: [\"lab/attempts\"]\n    require:\n"
                      "      capabilities:\n        - taskType: build-dag\n"
                      "          maxAttempts: {count: 4, window: 30d}\n")
    running = start_in_thread(GatewayConfig(upstream=f"http://{world.registry}", policy=load_policy(policy),
                                            trust=load_trust(world.trust), fresh_seconds=0.3))
    try:
        url = f"http://{running.address}/v2/lab/attempts/manifests/{doc['manifestDigest']}"
        assert httpx.get(url, headers={"Accept": MANIFEST_ACCEPT}).status_code == 200  # 4 of 4 allowed
        res = cli("attest", ref, "--benchmark", world.bench_ref, "--key", world.dir / "ver.key", "--issuer",
                  world.verifier_did, "--competence", 15, "--games", 10, "--state", state, "--cooldown", "0", "-o",
                  tmp_path / "fail4", "--json")
        assert res.exit_code == 1, res.output
        time.sleep(0.35)  # the cached allow is revalidated: a new attempt record changes the fingerprint
        resp = httpx.get(url, headers={"Accept": MANIFEST_ACCEPT})
        assert resp.status_code == 403 and "too_many_attempts" in resp.text
        # pull --require through a gateway that does not gate this repository: one verifier is not a quorum of two
        via = f"{gw.address}/lab/attempts:1"
        pulled = cli("pull", via, "-o", tmp_path / "pulled", "--trust", world.trust, "--require",
                     "build-dag>=1@minVerifiers=2")
        assert pulled.exit_code == 1 and "quorum_unmet" in pulled.output, pulled.output
        assert cli("pull", via, "-o", tmp_path / "pulled1", "--trust", world.trust, "--require",
                   "build-dag>=1@minVerifiers=1").exit_code == 0
    finally:
        running.stop()
