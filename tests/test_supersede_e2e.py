"""Delete-the-newer (issue 23 item 2) on a real registry: two `attest` runs of one ROM by one verifier, the
newer one's attestation manifest DELETEd by the publisher; the older level is not VERIFIED again, neither
by `resolve --require` nor by `pull --require` through the gateway."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from acx_oci.crypto.digest import sha256_digest
from acx_oci.evaluation.policy import load_policy
from acx_oci.gateway import GatewayConfig, RunningGateway, start_in_thread
from acx_oci.oci.model import MANIFEST_ACCEPT
from acx_oci.trust.trustfile import load_trust

from .support.cli import cli
from .support.policy_world import World, attest, build_world, push_cartridge


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
