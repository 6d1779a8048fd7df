"""The policy gateway in front of a real CNCF Distribution registry (which lacks the Referrers API)."""

from __future__ import annotations

import json
import logging
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest

from acx_oci.errors import GatewayDenied
from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, RunningGateway, start_in_thread
from acx_oci.model import statuslist
from acx_oci.oci import (
    ANNOTATION_TITLE,
    ARTIFACT_ATTESTATION,
    ARTIFACT_STATUS_LIST,
    MANIFEST_ACCEPT,
    MEDIA_INDEX,
    MEDIA_MANIFEST,
    MEDIA_VC,
    RegistryStore,
    StoreOptions,
    build_manifest,
    fallback_tag,
    open_store,
    parse_reference,
    referrer_tag,
)
from acx_oci.services.artifacts import MEDIA_BUNDLE, fetch_status_list, publish_status_list, status_tag
from acx_oci.services.consumer import resolve_cartridge
from acx_oci.trust import load_identity, load_trust

from ..support.cli import cli_expect as cli
from ..support.policy_world import World, attest, build_world, publish, push_cartridge, self_issued_credential

SBOM = "application/vnd.example.sbom.v1"


@pytest.fixture(scope="module", params=["distribution", pytest.param("ggcr", marks=pytest.mark.slow)])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> World:
    """Every test runs in front of CNCF Distribution (no Referrers API) and, slow, in front of
    go-containerregistry's registry (Referrers API listing the config media type, no filter)."""
    registry = request.getfixturevalue("registry" if request.param == "distribution" else "ggcr")
    w = build_world(registry, tmp_path_factory.mktemp(f"world-{request.param}"))
    w.kind = request.param
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


def skopeo_raw(ref: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["skopeo", "inspect", "--raw", "--tls-verify=false", f"docker://{ref}"],
                          capture_output=True, timeout=60)


def get_manifest(host: str, repo: str, ref: str, method: str = "GET") -> httpx.Response:
    return httpx.request(method, f"http://{host}/v2/{repo}/manifests/{ref}", headers={"Accept": MANIFEST_ACCEPT})


def test_skopeo_compliant_passes_and_bytes_are_untouched(world: World, gw: RunningGateway) -> None:
    through = skopeo_raw(f"{gw.address}/acx/strong:1")
    assert through.returncode == 0, through.stderr.decode()
    direct = skopeo_raw(f"{world.registry}/acx/strong:1")
    assert through.stdout == direct.stdout
    assert json.loads(through.stdout)["artifactType"] == "application/vnd.acx.cartridge.v1"
    head = get_manifest(gw.address, "acx/strong", world.digests["strong"], "HEAD")
    assert head.status_code == 200 and head.headers["docker-content-digest"] == world.digests["strong"]


@pytest.mark.parametrize(("name", "code"), [
    ("unattested", "no_attestation"), ("revoked", "revoked"), ("selfissued", "self_issued")])
def test_skopeo_non_compliant_is_denied_403(world: World, gw: RunningGateway, name: str, code: str) -> None:
    res = skopeo_raw(f"{gw.address}/acx/{name}:1")
    assert res.returncode != 0
    err = res.stderr.decode()
    assert "denied" in err.lower() and "build-dag[pkg:pypi/apache-airflow] >=senior" in err, err
    for target in ("1", world.digests[name]):  # by tag and by digest
        resp = get_manifest(gw.address, f"acx/{name}", target)
        assert resp.status_code == 403
        body = resp.json()["errors"][0]
        assert body["code"] == "DENIED"
        assert "build-dag[pkg:pypi/apache-airflow] >=senior" in body["message"] and code in body["message"]
        unmet = body["detail"]["unmet"]
        assert unmet[0]["description"] == "build-dag[pkg:pypi/apache-airflow] >=senior"
        assert code in unmet[0]["codes"]
    assert get_manifest(gw.address, f"acx/{name}", "1", "HEAD").status_code == 403


def test_non_cartridge_artifacts_pass_through_untouched(world: World, gw: RunningGateway) -> None:
    # the benchmark lives in a covered repository but is not a cartridge
    through = skopeo_raw(f"{gw.address}/acx/bench:2026.07.1")
    assert through.returncode == 0, through.stderr.decode()
    assert through.stdout == skopeo_raw(f"{world.registry}/acx/bench:2026.07.1").stdout
    # pushing through the gateway: blob upload sessions (Location rewritten to the gateway), manifest PUT
    s = RegistryStore(parse_reference(f"{gw.address}/acx/plain"), StoreOptions())
    data = uuid.uuid4().bytes * 1000
    layer = s.push_blob(data, "application/octet-stream")
    raw = build_manifest(SBOM, [layer])
    s.push_manifest(raw, MEDIA_MANIFEST, "v1")
    direct = open_store(f"{world.registry}/acx/plain")
    assert direct.fetch_manifest_raw("v1")[0] == raw
    assert direct.fetch_blob(layer.digest) == data
    assert s.fetch_blob(layer.digest) == data
    tags = httpx.get(f"http://{gw.address}/v2/acx/plain/tags/list").json()
    assert tags == {"name": "acx/plain", "tags": ["v1"]}
    post = httpx.post(f"http://{gw.address}/v2/acx/plain/blobs/uploads/")
    # Distribution answers with an absolute Location (rewritten to the gateway), ggcr with a relative one
    location = urljoin(f"http://{gw.address}/v2/", post.headers["location"])
    assert post.status_code == 202 and location.startswith(f"http://{gw.address}/v2/acx/plain/")
    # errors pass through as the upstream wrote them
    missing = get_manifest(gw.address, "acx/plain", "nope")
    assert missing.status_code == 404 and missing.json()["errors"][0]["code"] == "MANIFEST_UNKNOWN"


def test_uncovered_repository_is_not_gated(world: World, gw: RunningGateway) -> None:
    digest = push_cartridge(world, world.dir / "lab-open", f"{world.registry}/lab/open:1", "io.github.acme/open")
    res = skopeo_raw(f"{gw.address}/lab/open:1")
    assert res.returncode == 0, res.stderr.decode()
    assert json.loads(res.stdout)["artifactType"] == "application/vnd.acx.cartridge.v1"
    assert get_manifest(gw.address, "lab/open", digest).status_code == 200


def test_attestation_pushes_are_verified(world: World, gw: RunningGateway) -> None:
    """A self-issued attestation pushed through the gateway is refused; the honest one is accepted and listed."""
    gw_ref = f"{gw.address}/lab/agent:1"
    subject = push_cartridge(world, world.dir / "lab-agent", gw_ref, "io.github.acme/lab-agent")
    store = open_store(gw_ref)
    out = world.dir / "out-lab"
    # `acx-oci attest` pointed at the gateway: status list, then the attestation, both through the gateway
    digest = attest(world, gw_ref, out, world.dir / "state-lab")["attestationDigest"]
    accepted = store.fetch_manifest(digest).descriptor

    forged = self_issued_credential(world, out)
    with pytest.raises(GatewayDenied) as refused:  # exit 1 with the gateway's reason, not exit 3
        publish(store, out, forged, status=False)
    assert "HTTP 403" in str(refused.value) and "DENIED" in str(refused.value)
    assert "self_issued" in str(refused.value)
    inflated = json.loads((out / "credential.json").read_bytes())
    for r in inflated["credentialSubject"]["result"]:  # forged: the level edited after signing
        if "acx:acxLevel" in r:
            r["acx:acxLevel"] = 35
    with pytest.raises(GatewayDenied, match=r"proof_invalid"):
        publish(store, out, json.dumps(inflated).encode(), status=False)
    mis_bound = self_issued_credential(world, out, cartridge_digest=world.digests["strong"])
    with pytest.raises(GatewayDenied, match="manifest_mismatch"):
        publish(store, out, mis_bound, status=False)
    # the attestation type moved from artifactType into config.mediaType is still recognised
    from acx_oci.oci import dump
    from acx_oci.services.artifacts.attestation import build_attestation

    raw, _ = build_attestation(store, store.resolve(subject), forged, [])
    sneaky = json.loads(raw)
    del sneaky["artifactType"]
    sneaky["config"]["mediaType"] = ARTIFACT_ATTESTATION
    with pytest.raises(GatewayDenied, match="self_issued"):
        store.push_referrer(dump(sneaky), subject, None)

    # the upstream has it, its fallback index lists it, and it has its own tag
    upstream = RegistryStore(parse_reference(f"{world.registry}/lab/agent"), StoreOptions())
    assert upstream.fetch_manifest(accepted.digest).subject is not None
    if world.kind == "distribution":  # a registry with the Referrers API needs no fallback index
        assert accepted.digest in [d.digest for d in upstream.read_referrers_index(subject)]
    # its own tag only where the fallback scan may need it (no Referrers API)
    assert (referrer_tag(accepted.digest, subject) in upstream.list_tags()) == (world.kind == "distribution")
    # the credential and its cosign 3 projection (a Sigstore bundle, not an acx attestation) went up
    listed = upstream.referrers(subject).descriptors
    assert [d.digest for d in listed if d.artifact_type != MEDIA_BUNDLE] == [accepted.digest]
    # nothing refused reached the upstream
    assert len(listed) == 2 and sum(d.artifact_type == MEDIA_BUNDLE for d in listed) == 1

    # GET referrers through the gateway: a valid OCI image index, with the artifactType filter
    url = f"http://{gw.address}/v2/lab/agent/referrers/{subject}"
    resp = httpx.get(url)
    assert resp.status_code == 200 and resp.headers["content-type"].startswith(MEDIA_INDEX)
    index = resp.json()
    assert index["schemaVersion"] == 2 and index["mediaType"] == MEDIA_INDEX
    acx = [m for m in index["manifests"] if m.get("artifactType") != MEDIA_BUNDLE]  # less the cosign 3 bundle
    assert [m["digest"] for m in acx] == [accepted.digest] and len(index["manifests"]) == 2
    entry = acx[0]
    assert entry["mediaType"] == MEDIA_MANIFEST and entry["artifactType"] == ARTIFACT_ATTESTATION
    assert entry["size"] == accepted.size and "dev.acx.level.career-tier" in entry["annotations"]
    filtered = httpx.get(url, params={"artifactType": ARTIFACT_ATTESTATION})
    assert filtered.headers["oci-filters-applied"] == "artifactType"
    assert [m["digest"] for m in filtered.json()["manifests"]] == [accepted.digest]
    assert httpx.get(url, params={"artifactType": SBOM}).json()["manifests"] == []
    assert httpx.get(f"http://{gw.address}/v2/lab/agent/referrers/sha256:{'0' * 64}").json()["manifests"] == []
    if world.kind == "distribution":
        oras_style = skopeo_raw(f"{world.registry}/lab/agent:{fallback_tag(subject)}")
        assert accepted.digest in oras_style.stdout.decode()

    # an accepted PUT with a subject is answered with OCI-Subject
    raw = upstream.fetch_manifest_raw(accepted.digest)[0]
    put = httpx.put(f"http://{gw.address}/v2/lab/agent/manifests/{accepted.digest}", content=raw,
                    headers={"Content-Type": MEDIA_MANIFEST})
    assert put.status_code == 201 and put.headers["oci-subject"] == subject
    # ... also for referrers that are not attestations (an SBOM), which get an index entry too
    sbom = build_manifest(SBOM, [upstream.push_blob(b"sbom", "text/plain")],
                          subject=upstream.fetch_manifest(subject).descriptor)
    put = httpx.put(f"http://{gw.address}/v2/lab/agent/manifests/v1-sbom", content=sbom,
                    headers={"Content-Type": MEDIA_MANIFEST})
    assert put.status_code == 201 and put.headers["oci-subject"] == subject
    assert len(httpx.get(url).json()["manifests"]) == 3  # the attestation, its cosign 3 bundle, the SBOM


def test_resolve_through_gateway_uses_native_referrers_api(world: World, gw: RunningGateway) -> None:
    via = cli("resolve", world.ref("strong", gw.address), "--trust", world.trust, "--json").output
    direct = cli("resolve", world.ref("strong"), "--trust", world.trust, "--json").output
    a, b = json.loads(via), json.loads(direct)
    # the gateway serves typed descriptors; the direct listing from ggcr needed classifying
    assert b["classifiedByManifest"] == (0 if world.kind == "distribution" else 2) and a["classifiedByManifest"] == 0
    for doc in (a, b):
        for key in ("reference", "classifiedByManifest", "notes", "phases"):  # (phases: timings)
            doc.pop(key)
    assert a == b
    assert a["capabilities"][0]["effective"] == "VERIFIED"
    trust = load_trust(world.trust)
    now = datetime.now(UTC)
    through_store = RegistryStore(parse_reference(world.ref("strong", gw.address)), StoreOptions())
    upstream_store = RegistryStore(parse_reference(world.ref("strong")), StoreOptions())
    r1 = resolve_cartridge(through_store, "1", trust, now=now)
    r2 = resolve_cartridge(upstream_store, "1", trust, now=now)
    subject = through_store.resolve("1").digest
    assert through_store.referrers(subject).source == "api"
    assert upstream_store.referrers(subject).source == ("fallback" if world.kind == "distribution" else "api")
    same = {"reference": "", "classifiedByManifest": 0, "notes": [], "phases": {}}
    assert r1.to_json() | same == r2.to_json() | same


def test_verdict_cache_revalidates_on_revocation(world: World, gw: RunningGateway, tmp_path: Path) -> None:
    """A revocation published straight to the upstream (not through the gateway) flips the cached verdict."""
    ref = world.ref("flip")
    digest = push_cartridge(world, tmp_path / "flip", ref, "io.github.acme/flip-agent")
    digest_att = attest(world, ref, tmp_path / "out", tmp_path / "state")["attestationDigest"]
    assert get_manifest(gw.address, "acx/flip", digest).status_code == 200
    evaluations = gw.gateway.stats["evaluations"]
    assert get_manifest(gw.address, "acx/flip", digest).status_code == 200
    assert gw.gateway.stats["evaluations"] == evaluations  # served from the cache
    cli("revoke", digest_att, "--key", world.dir / "ver.key", "--state", tmp_path / "state")
    time.sleep(gw.gateway.config.fresh_seconds + 0.05)
    resp = get_manifest(gw.address, "acx/flip", digest)
    assert resp.status_code == 403 and "revoked" in resp.json()["errors"][0]["message"]
    assert gw.gateway.stats["evaluations"] == evaluations + 1


def test_health_and_access_log(gw: RunningGateway, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="acx_oci.gateway.access")
    health = httpx.get(f"http://{gw.address}/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert httpx.get(f"http://{gw.address}/readyz").json()["upstreamStatus"] == 200
    httpx.get(f"http://{gw.address}/v2/")
    deadline = time.monotonic() + 5  # the line is written once the response has been sent
    while True:
        lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "acx_oci.gateway.access"]
        if lines[-1]["path"] == "/v2/" or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert lines[-1]["path"] == "/v2/" and lines[-1]["status"] == 200 and lines[-1]["method"] == "GET"
    assert {"ts", "ms", "bytes", "remote"} <= set(lines[-1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_cli_gateway_subprocess_serves_and_shuts_down_gracefully(world: World) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "acx_oci", "gateway", "--upstream", f"http://{world.registry}",
         "--listen", f"127.0.0.1:{port}", "--policy", str(world.policy), "--trust", str(world.trust)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        started = time.perf_counter()
        assert get_manifest(f"127.0.0.1:{port}", "acx/unattested", "1").status_code == 403
        assert get_manifest(f"127.0.0.1:{port}", "acx/bench", "2026.07.1").status_code == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        assert time.perf_counter() - started < 15
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode() if proc.stderr else ""
    records = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    denied = [r for r in records if r["path"] == "/v2/acx/unattested/manifests/1"]
    assert denied and denied[0]["status"] == 403 and denied[0]["decision"] == "denied"


def test_status_list_rollback_push_is_refused(world: World, gw: RunningGateway, tmp_path: Path) -> None:
    """After `revoke`, putting the pre-revocation list back through the gateway is refused with both sequences."""
    gw_ref = f"{gw.address}/lab/rollback:1"
    push_cartridge(world, tmp_path / "cart", gw_ref, "io.github.acme/rollback-agent")
    out, state = tmp_path / "out", tmp_path / "state"
    att = attest(world, gw_ref, out, state)  # status list and attestation both pushed through the gateway
    old = json.loads((out / "status-list.json").read_bytes())
    # a second cartridge in another repository, same verifier state: the same list is published there too
    other = f"{gw.address}/lab/rollback-other:1"
    push_cartridge(world, tmp_path / "cart2", other, "io.github.acme/rollback-other-agent")
    attest(world, other, tmp_path / "out2", state)
    # revoke re-signs once and pushes that one list to both repositories through the gateway: both accepted
    rev = json.loads(cli("revoke", att["attestationDigest"], "--key", world.dir / "ver.key", "--state", state,
                         "--json").output)
    assert not rev["failed"] and len([p for p in rev["published"] if "lab/rollback" in p]) == 2, rev
    new = json.loads((out / "status-list.json").read_bytes())
    old_seq, new_seq = statuslist.list_sequence(old), statuslist.list_sequence(new)
    assert new_seq > old_seq >= 1
    store = open_store(gw_ref)
    with pytest.raises(GatewayDenied) as refused:
        publish_status_list(store, old)
    assert "HTTP 403" in str(refused.value) and "status_rollback" in str(refused.value)
    # the OCI error body names both sequences
    data = json.dumps(old, sort_keys=True, separators=(",", ":")).encode()
    layer = store.push_blob(data, MEDIA_VC, {ANNOTATION_TITLE: "status-list.json"})
    raw = build_manifest(ARTIFACT_STATUS_LIST, [layer])
    tag = status_tag(old["id"])
    resp = httpx.put(f"http://{gw.address}/v2/lab/rollback/manifests/{tag}", content=raw,
                     headers={"Content-Type": MEDIA_MANIFEST})
    assert resp.status_code == 403
    err = resp.json()["errors"][0]
    assert err["code"] == "DENIED" and "status_rollback" in err["detail"]["codes"]
    assert err["detail"]["pushedSequence"] == old_seq and err["detail"]["upstreamSequence"] == new_seq
    assert f"acx:sequence {old_seq}" in err["message"] and f"acx:sequence {new_seq}" in err["message"]
    # re-pushing the current list is no newer either; a list signed by someone else may not replace it
    with pytest.raises(GatewayDenied, match="status_rollback"):
        publish_status_list(store, new)
    stranger = load_identity(world.dir / "pub.key")
    forged = statuslist.sign_status_list(
        statuslist.new_status_list(list_url=old["id"], issuer=stranger.did, valid_from=datetime.now(UTC),
                                   sequence=new_seq + 100), stranger, stranger.verification_method,
        datetime.now(UTC))
    with pytest.raises(GatewayDenied, match="status_invalid"):
        publish_status_list(store, forged)
    # nor can the tag be deleted through the gateway to make room for the old list
    upstream = RegistryStore(parse_reference(f"{world.registry}/lab/rollback"), StoreOptions())
    current = upstream.fetch_manifest_raw(tag)[2]
    gone = httpx.delete(f"http://{gw.address}/v2/lab/rollback/manifests/{current}")
    assert gone.status_code == 403 and gone.json()["errors"][0]["detail"]["codes"] == ["status_delete"]
    # the upstream still holds the revoked list, and a newer one (status-refresh) goes through
    found = fetch_status_list(upstream, old["id"])
    assert found is not None and statuslist.list_sequence(found[0]) == new_seq
    cli("status-refresh", "--key", world.dir / "ver.key", "--state", state)
    found = fetch_status_list(upstream, old["id"])
    assert found is not None and statuslist.list_sequence(found[0]) == new_seq + 1
    resolved = cli("resolve", gw_ref, "--trust", world.trust, "--json").output
    assert "revoked" in json.loads(resolved)["capabilities"][0]["rejected"][0]["codes"]


def test_attesting_another_repository_never_denies_a_pull(world: World, gw: RunningGateway, tmp_path: Path) -> None:
    """Issue 34.1, as resolve: one verifier list in two repositories; the older copy is stale, not a rollback,
    and a pre-revocation copy put back upstream never un-revokes."""
    state = tmp_path / "state"
    first = push_cartridge(world, tmp_path / "a", world.ref("across-a"), "io.github.acme/across-a")
    attest(world, world.ref("across-a"), tmp_path / "out-a", state)
    assert get_manifest(gw.address, "acx/across-a", first).status_code == 200
    second = push_cartridge(world, tmp_path / "b", world.ref("across-b"), "io.github.acme/across-b")
    att_b = attest(world, world.ref("across-b"), tmp_path / "out-b", state)  # the list republished in b only
    before = json.loads((tmp_path / "out-b" / "status-list.json").read_bytes())
    assert get_manifest(gw.address, "acx/across-b", second).status_code == 200
    # a gateway with no verdict cached yet, sharing this one's status cache, decides across-a afresh
    fresh = start_in_thread(gw.gateway.config)
    try:
        resp = get_manifest(fresh.address, "acx/across-a", first)
        assert resp.status_code == 200, resp.text  # old main: 403 status_rollback, status_unknown
    finally:
        fresh.stop()
    cli("revoke", att_b["attestationDigest"], "--key", world.dir / "ver.key", "--state", state)
    time.sleep(gw.gateway.config.fresh_seconds + 0.05)
    resp = get_manifest(gw.address, "acx/across-b", second)
    assert resp.status_code == 403 and "revoked" in resp.json()["errors"][0]["message"]
    publish_status_list(open_store(f"{world.registry}/acx/across-b"), before)  # straight upstream
    time.sleep(gw.gateway.config.fresh_seconds + 0.05)
    resp = get_manifest(gw.address, "acx/across-b", second)
    assert resp.status_code == 403 and "revoked" in resp.json()["errors"][0]["message"], resp.text
    assert get_manifest(gw.address, "acx/across-a", first).status_code == 200


def _attested_place(world: World, gw: RunningGateway, tmp_path: Path, repo: str,
                    flood: int = 0) -> tuple[dict[str, Any], RegistryStore, Path]:
    """A cartridge of ``repo`` attested through the gateway, ``flood`` other manifests tagged before it upstream,
    and its list's tag then deleted upstream (where the gateway has no say): (the list, upstream, state)."""
    gw_ref = f"{gw.address}/{repo}:1"
    push_cartridge(world, tmp_path / "cart", gw_ref, f"io.github.acme/{repo.replace('/', '-')}")
    out, state = tmp_path / "out", tmp_path / "state"
    attest(world, gw_ref, out, state)
    mine = json.loads((out / "status-list.json").read_bytes())
    upstream = RegistryStore(parse_reference(f"{world.registry}/{repo}"), StoreOptions())
    doc = json.loads(upstream.fetch_manifest_raw("1")[0])
    with httpx.Client() as c:
        for i in range(flood):
            other = json.dumps({**doc, "annotations": {"flood": str(i)}}).encode()
            r = c.put(f"http://{world.registry}/v2/{repo}/manifests/0-{i:04d}", content=other,
                      headers={"Content-Type": MEDIA_MANIFEST})
            assert r.status_code == 201, r.text
    digest = upstream.resolve(status_tag(mine["id"])).digest
    assert httpx.delete(f"http://{world.registry}/v2/{repo}/manifests/{digest}").status_code == 202
    return mine, upstream, state


def _strangers_list(world: World, mine: dict[str, Any]) -> dict[str, Any]:
    """Another issuer's own, soundly signed list for the verifier's list URL, with a much higher sequence."""
    stranger = load_identity(world.dir / "pub.key")
    return statuslist.sign_status_list(
        statuslist.new_status_list(list_url=mine["id"], issuer=stranger.did, valid_from=datetime.now(UTC),
                                   sequence=statuslist.list_sequence(mine) + 100), stranger,
        stranger.verification_method, datetime.now(UTC))


def _the_verifiers_list_goes_back(world: World, mine: dict[str, Any], upstream: RegistryStore, state: Path) -> None:
    cli("status-refresh", "--key", world.dir / "ver.key", "--state", state)  # the verifier's own, via the gateway
    found = fetch_status_list(upstream, mine["id"])
    assert found is not None and found[0]["issuer"] == mine["issuer"], found


def test_a_status_list_place_belongs_to_the_issuer_of_the_credentials_naming_it(
        world: World, gw: RunningGateway, tmp_path: Path) -> None:
    """Issue 42.3: another issuer's list, signed for the verifier's list URL and pushed at its tag once that tag is
    empty upstream, is refused through the gateway; planted upstream directly, it does not keep the verifier's own
    list out (before: accepted, and then the verifier's list was refused there as "signed by someone else")."""
    mine, upstream, state = _attested_place(world, gw, tmp_path, "lab/planted")
    planted = _strangers_list(world, mine)
    with pytest.raises(GatewayDenied, match="the credentials that name it were issued by"):
        publish_status_list(open_store(f"{gw.address}/lab/planted:1"), planted)
    publish_status_list(upstream, planted)  # planted upstream directly
    _the_verifiers_list_goes_back(world, mine, upstream, state)
    with pytest.raises(GatewayDenied, match="the credentials that name it were issued by"):
        publish_status_list(open_store(f"{gw.address}/lab/planted:1"), planted)


def test_a_tag_flood_never_gives_a_status_list_place_to_a_stranger(world: World, gw: RunningGateway,
                                                                   tmp_path: Path) -> None:
    """Attack review of 42.3: past the search's bound (610 other manifests tagged first upstream) nobody was found
    to own the place and the stranger's list went in; a search cut short lets only a trusted verifier push there."""
    mine, upstream, state = _attested_place(world, gw, tmp_path, "lab/flooded", flood=610)
    planted = _strangers_list(world, mine)
    with pytest.raises(GatewayDenied, match="cannot be told"):
        publish_status_list(open_store(f"{gw.address}/lab/flooded:1"), planted)
    publish_status_list(upstream, planted)  # planted upstream directly
    _the_verifiers_list_goes_back(world, mine, upstream, state)
