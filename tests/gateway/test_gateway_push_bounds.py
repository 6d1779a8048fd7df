"""An attestation PUT through the gateway is verified before the upstream stores it, on the evaluation limiter: the
game records it lists are read into memory first. A manifest may list ~25 000 of them (2 MiB each: ~50 GB), and
a few such pushes held every evaluation thread (and the memory) for as long as the reads took."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, start_in_thread
from acx_oci.gateway import upstream as upstream_mod
from acx_oci.oci import (
    ARTIFACT_ATTESTATION,
    MEDIA_DSSE,
    MEDIA_MANIFEST,
    MEDIA_VC,
    Descriptor,
    build_manifest,
    open_store,
)
from acx_oci.trust import load_trust

from ..support.faultproxy import FaultProxy
from ..support.policy_world import World, build_world, push_cartridge
from ..support.registry import Registry


def push_through_gateway(proxy: FaultProxy, w: World, raw: bytes) -> httpx.Response:
    """PUT ``raw`` through a fresh gateway in front of the fault proxy (its log shows what the gateway read)."""
    running = start_in_thread(GatewayConfig(upstream=f"http://{proxy.host}", policy=load_policy(w.policy),
                                            trust=load_trust(w.trust)))
    try:
        return httpx.put(f"http://{running.address}/v2/plain/evidence-flood/manifests/flood", content=raw,
                         headers={"Content-Type": MEDIA_MANIFEST}, timeout=60)
    finally:
        running.stop()


def test_an_attestation_push_listing_too_many_game_record_bytes_is_refused_before_any_is_read(
        own_registry: Registry, proxy: FaultProxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = build_world(own_registry.host, tmp_path)
    ref = f"{own_registry.host}/plain/evidence-flood:1.0.0"
    digest = push_cartridge(w, tmp_path / "cart", ref, "io.github.acme/evidence-flood")
    store = open_store(ref)
    subject = Descriptor(MEDIA_MANIFEST, digest, store.resolve(digest).size)
    vc = store.push_blob(b'{"not": "a credential"}', MEDIA_VC)
    chunk = 64 * 1024
    layers = [store.push_blob(bytes([i]) * chunk, MEDIA_DSSE) for i in range(48)]
    raw = build_manifest(ARTIFACT_ATTESTATION, [vc, *layers, *layers], subject=subject)  # repeats count once
    monkeypatch.setattr(upstream_mod, "MAX_PUSH_EVIDENCE_BYTES", 40 * chunk, raising=False)  # (64 MiB in service)
    resp = push_through_gateway(proxy, w, raw)
    assert resp.status_code == 403, resp.text
    assert resp.json()["errors"][0]["detail"]["codes"] == ["evidence_too_large"], resp.text
    read = [p for m, p, _ in proxy.log if m == "GET" and "/blobs/" in p]
    assert read == [], read  # not one game record (3 MiB listed, 6 MiB with the repeats) was read
    # within the bound the records are read, each once: the 48 distinct layers are exactly at it
    monkeypatch.setattr(upstream_mod, "MAX_PUSH_EVIDENCE_BYTES", 48 * chunk, raising=False)
    resp = push_through_gateway(proxy, w, raw)
    assert resp.status_code == 403 and "evidence_too_large" not in resp.text, resp.text  # refused for the rest
    read = [p for m, p, _ in proxy.log if m == "GET" and any(d.digest in p for d in layers)]
    assert sorted(read) == sorted({p for p in read}) and len(read) == len(layers), read
