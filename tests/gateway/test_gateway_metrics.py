"""``/metrics`` and ``/healthz`` on the gateway's listener: per-gateway counts, no collision with ``/v2/``."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, RunningGateway, start_in_thread
from acx_oci.oci import MANIFEST_ACCEPT
from acx_oci.trust import load_trust

from ..support.policy_world import World, build_world


@pytest.fixture(scope="module")
def world(registry: str, tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(registry, tmp_path_factory.mktemp("world-metrics"))


@pytest.fixture(scope="module")
def pair(world: World) -> Iterator[tuple[RunningGateway, RunningGateway]]:
    config = GatewayConfig(upstream=f"http://{world.registry}", policy=load_policy(world.policy),
                           trust=load_trust(world.trust), fresh_seconds=30)
    one, two = start_in_thread(config), start_in_thread(config)
    try:
        yield one, two
    finally:
        one.stop()
        two.stop()


def samples(gw: RunningGateway) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    resp = httpx.get(f"{gw.url}/metrics")
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(resp.text) for s in f.samples}


def get(gw: RunningGateway, repo: str) -> httpx.Response:
    return httpx.get(f"{gw.url}/v2/{repo}/manifests/1", headers={"Accept": MANIFEST_ACCEPT})


def test_denials_count_by_reason_per_gateway(pair: tuple[RunningGateway, RunningGateway]) -> None:
    one, two = pair
    assert get(one, "acx/unattested").status_code == 403
    assert get(one, "acx/unattested").status_code == 403
    assert get(one, "acx/strong").status_code == 200
    assert get(one, "acx/strong").status_code == 200
    m1, m2 = samples(one), samples(two)
    assert m1[("acx_gateway_denials_total", (("reason", "no_attestation"),))] == 2
    assert ("acx_gateway_denials_total", (("reason", "no_attestation"),)) not in m2  # its own registry
    assert m1[("acx_gateway_requests_total", (("method", "GET"), ("outcome", "denied")))] == 2
    assert m1[("acx_gateway_requests_total", (("method", "GET"), ("outcome", "allowed")))] == 2
    assert m1[("acx_gateway_verdict_cache_hits_total", (("kind", "fresh"),))] >= 1  # the second strong GET
    assert m1[("acx_gateway_upstream_seconds_count", ())] >= 4
    assert m1[("acx_gateway_open_connections", ())] >= 1  # this scrape's own connection
    assert m2[("acx_gateway_upstream_seconds_count", ())] == 0


def test_own_paths_do_not_collide_with_the_registry_api(pair: tuple[RunningGateway, RunningGateway]) -> None:
    one, _ = pair
    assert httpx.get(f"{one.url}/healthz").json() == {"status": "ok"}
    # a repository called "metrics" or "healthz" is the registry's, proxied as any other
    for repo in ("metrics", "healthz", "acx/metrics"):
        resp = get(one, repo)
        assert resp.status_code == 404 and resp.json()["errors"][0]["code"] in ("NAME_UNKNOWN", "MANIFEST_UNKNOWN")
    assert httpx.post(f"{one.url}/metrics").status_code == 405
    before = samples(one)[("acx_gateway_requests_total", (("method", "GET"), ("outcome", "internal")))]
    assert samples(one)[("acx_gateway_requests_total", (("method", "GET"), ("outcome", "internal")))] == before + 1


def test_credentials_in_the_upstream_url_never_reach_an_answer(world: World) -> None:
    """``--upstream http://user:pass@host``: errors name the host, never the credential."""
    import socket

    with socket.socket() as s:  # a port nothing listens on: the upstream is unreachable
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = GatewayConfig(upstream=f"http://robot:s3cret-token@127.0.0.1:{port}", policy=load_policy(world.policy),
                           trust=load_trust(world.trust), fresh_seconds=30, timeout=2.0)
    assert config.upstream_host == f"127.0.0.1:{port}"
    gw = start_in_thread(config)
    try:
        answers = [httpx.get(f"{gw.url}{path}", headers={"Accept": MANIFEST_ACCEPT}, timeout=30)
                   for path in ("/v2/", "/v2/demo/cart/manifests/latest", "/healthz", "/readyz")]
    finally:
        gw.stop()
    assert all(a.status_code in (200, 502, 503, 504) for a in answers), [a.status_code for a in answers]
    assert any(a.status_code >= 500 for a in answers)
    for a in answers:
        assert "s3cret" not in a.text and "s3cret" not in str(a.headers), a.text[:300]
