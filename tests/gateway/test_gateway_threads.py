"""A flood of new cartridge manifests must not starve the revalidation of verdicts the gateway already holds.

Evaluations run on their own thread limiter (``GatewayConfig.evaluation_threads``); before, they shared anyio's 40
default threads with everything else, so 40 slow evaluations (an upstream that answers one repository slowly, or
an attacker pushing many cartridge-typed manifests) held up every other covered pull. The assertion is an order,
not a time: the known cartridge's answer arrives while no flooded request has been answered yet.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, RunningGateway, start_in_thread
from acx_oci.oci import (
    ARTIFACT_CARTRIDGE,
    EMPTY_JSON,
    MANIFEST_ACCEPT,
    MEDIA_EMPTY,
    MEDIA_MANIFEST,
    build_manifest,
    open_store,
)
from acx_oci.trust import load_trust

from ..support.cli import cli, ok
from ..support.faultproxy import FaultProxy
from ..support.gateway_proc import minimal_policy_files
from ..support.registry import Registry
from ..support.resolve_world import push_cartridge

FLOOD = 44  # more than anyio's 40 default threads
DELAY = 3.0  # seconds the proxy holds each upstream read of the flooded repository


def push_cartridge_typed(registry: str, repo: str, n: int) -> list[str]:
    """``n`` distinct manifests typed as cartridges (no ROM: each evaluation fails closed, after its fetches)."""
    store = open_store(f"{registry}/{repo}:x")
    empty = store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    return [store.push_manifest(build_manifest(ARTIFACT_CARTRIDGE, [empty], annotations={"n": str(i)}),
                                MEDIA_MANIFEST, f"t{i}").digest for i in range(n)]


@pytest.fixture
def gateway(own_registry: Registry, proxy: FaultProxy, tmp_path: Path) -> Iterator[RunningGateway]:
    policy, trust = minimal_policy_files(tmp_path)  # covers acx/*
    running = start_in_thread(GatewayConfig(upstream=f"http://{proxy.host}", policy=load_policy(policy),
                                            trust=load_trust(trust), fresh_seconds=0, evaluation_threads=2))
    try:
        yield running
    finally:
        proxy.clear()
        running.stop()


def test_a_flood_of_evaluations_does_not_starve_a_known_verdict(own_registry: Registry, proxy: FaultProxy,
                                                                gateway: RunningGateway, tmp_path: Path) -> None:
    flood = push_cartridge_typed(own_registry.host, "acx/flood", FLOOD)
    ok(cli("keygen", tmp_path / "publisher"))
    known = str(push_cartridge(tmp_path, own_registry.host, "acx/known", "agent", tmp_path / "publisher.key")
                ["manifestDigest"])
    base = f"http://{gateway.address}/v2"
    first = httpx.get(f"{base}/acx/known/manifests/{known}", headers={"Accept": MANIFEST_ACCEPT}, timeout=60)
    assert first.status_code == 403  # judged (a real cartridge, no verified claim: denied) and cached

    proxy.add("delay", path="/v2/acx/flood/", seconds=DELAY)
    answered: list[int] = []
    lock = threading.Lock()

    def pull(digest: str) -> None:
        status = httpx.get(f"{base}/acx/flood/manifests/{digest}", headers={"Accept": MANIFEST_ACCEPT},
                           timeout=300).status_code
        with lock:
            answered.append(status)

    threads = [threading.Thread(target=pull, args=(d,), daemon=True) for d in flood]
    for t in threads:
        t.start()
    # every flooded GET has reached the upstream; once the proxy answers them (after its delay) all 44 evaluations
    # are asked for at once, and each of their upstream reads waits out the delay again
    for _ in range(600):
        if sum(1 for _, path, _ in proxy.log if "/v2/acx/flood/manifests/sha256:" in path) >= FLOOD:
            break
        time.sleep(0.05)
    time.sleep(DELAY + 0.5)
    again = httpx.get(f"{base}/acx/known/manifests/{known}", headers={"Accept": MANIFEST_ACCEPT}, timeout=120)
    with lock:
        done_before = len(answered)
    assert again.status_code == 403 and gateway.gateway.stats["revalidations"] >= 1
    assert done_before == 0, f"{done_before} flooded requests were answered before the known cartridge's"
    proxy.clear()
    for t in threads:
        t.join(120)
    assert sorted(set(answered)) == [403] and len(answered) == FLOOD
