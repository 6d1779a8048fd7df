"""The gateway's router and blob gate against a real Distribution registry, sent the way an attacker would.

Clients normalise paths (httpx, requests and curl remove dot segments), so the
variants go out over raw sockets, byte for byte.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote_from_bytes

import httpx
import pytest

from acx_oci.crypto import sha256_digest
from acx_oci.errors import GatewayDenied, RegistryError, RequestRefused
from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, RunningGateway, start_in_thread
from acx_oci.gateway.paths import NAME_RE, parse_request
from acx_oci.oci import (
    EMPTY_DIGEST,
    MANIFEST_ACCEPT,
    MEDIA_MANIFEST,
    RegistryStore,
    StoreOptions,
    build_manifest,
    open_store,
    parse_reference,
)
from acx_oci.trust import load_trust

from ..support.cli import cli
from ..support.oras_cli import oras, oras_binary
from ..support.policy_world import World, attest, build_world, push_cartridge

DENIED = ("unattested", "revoked", "selfissued")


@pytest.fixture(scope="module")
def world(registry: str, tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(registry, tmp_path_factory.mktemp("world"))


def _start(world: World) -> RunningGateway:
    config = GatewayConfig(upstream=f"http://{world.registry}", policy=load_policy(world.policy),
                           trust=load_trust(world.trust), fresh_seconds=0.3)
    return start_in_thread(config)


@pytest.fixture(scope="module")
def gw(world: World) -> Iterator[RunningGateway]:
    running = _start(world)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def fresh_gw(world: World) -> Iterator[RunningGateway]:
    """A gateway that has served nothing yet (an empty blob ledger, as after a restart or on another replica)."""
    running = _start(world)
    try:
        yield running
    finally:
        running.stop()


def raw_request(address: str, method: str, target: bytes, body: bytes = b"",
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 request with the request target exactly as given; (status, headers, body)."""
    host, port = address.rsplit(":", 1)
    head = [method.encode() + b" " + target + b" HTTP/1.1", f"Host: {address}".encode(),
            f"Accept: {MANIFEST_ACCEPT}".encode(), b"Connection: close", f"Content-Length: {len(body)}".encode()]
    head += [f"{k}: {v}".encode() for k, v in (headers or {}).items()]
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(b"\r\n".join(head) + b"\r\n\r\n" + body)
        data = bytearray()
        while chunk := s.recv(65536):
            data += chunk
    top, _, payload = bytes(data).partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), {k.lower(): v for k, v in fields.items()}, payload


def path_variants(name: str, ref: str) -> list[bytes]:
    """Every spelling we could think of that a normalising hop might read as ``/v2/acx/<name>/manifests/<ref>``."""
    real = f"acx/{name}"
    tail = f"manifests/{ref}"
    variants = [
        f"/v2/x/../{real}/{tail}", f"/v2/./{real}/{tail}", f"/v2/acx/./{name}/{tail}", f"/v2/{real}/./{tail}",
        f"/v2/{real}/manifests/./{ref}", f"/v2/lab/open/../../{real}/{tail}", f"/v2/acx/x/../{name}/{tail}",
        f"/v2/acx//{name}/{tail}", f"//v2/{real}/{tail}", f"/v2//{real}/{tail}", f"/v2/{real}//{tail}",
        f"/v2/{real}/manifests//{ref}", f"/v2/{real}/{tail}/", f"/v2/{real}/{tail}/.", f"/v2/{real}/{tail}/..",
        f"/v2/x/%2e%2e/{real}/{tail}", f"/v2/x/%2E%2E/{real}/{tail}", f"/v2/x/.%2e/{real}/{tail}",
        f"/v2/x/%2e./{real}/{tail}", f"/v2/%2e/{real}/{tail}", f"/v2/x/%252e%252e/{real}/{tail}",
        f"/v2/x/%25252e%25252e/{real}/{tail}", f"/v2/acx%2f{name}/{tail}", f"/v2/acx%2F{name}/{tail}",
        f"/v2/acx%252f{name}/{tail}", f"/v2/{real}%2fmanifests%2f{ref}", f"/v2/{real}/manifests%2F{ref}",
        f"/v2/x/..%2f{real}/{tail}", f"/v2/x/%2e%2e%2f{real}/{tail}", f"/v2/x/..\\{real}/{tail}",
        f"/v2/x\\..\\{real}/{tail}", f"/v2/lab/..;/{real}/{tail}", f"/v2/{real};x/{tail}",
        f"/v2/ACX/{name}/{tail}", f"/v2/acx/{name.upper()}/{tail}", f"/v2/%61cx/{name}/{tail}",
        f"/v2/acx/{name}/%6danifests/{ref}", f"/v2/{real}/{tail}%00", f"/v2/{real}/{tail}%20",
        f"/v2/{real}/{tail}#frag", f"/v2/x/../../v2/{real}/{tail}", f"/v2/{real}/manifests/../manifests/{ref}",
    ]
    out = [v.encode() for v in variants]
    out += [f"/v2/acx/{name}\u00e9/{tail}".encode(), f"/v2/{real}/manifests/{ref}\u200b".encode(),
            f"/v2/x/\uff0e\uff0e/{real}/{tail}".encode(), f"/v2/acx\u2215{name}/{tail}".encode(),
            f"/v2/{real}/{tail}".encode() + b"\xff", f"http://evil/v2/x/../{real}/{tail}".encode()]
    return out


@pytest.mark.parametrize("name", DENIED)
def test_every_path_variant_of_a_denied_cartridge_is_refused(world: World, gw: RunningGateway, name: str) -> None:
    for ref in ("1", world.digests[name]):
        status, headers, _ = raw_request(gw.address, "GET", f"/v2/acx/{name}/manifests/{ref}".encode())
        assert status == 403 and "acx-gateway-denied" in headers  # the canonical path: the policy's denial
        for target in path_variants(name, ref):
            for method in ("GET", "HEAD"):
                status, headers, body = raw_request(gw.address, method, target)
                assert 400 <= status < 500, (method, target, status, body[:200])
                assert b'"schemaVersion"' not in body and "docker-content-digest" not in headers, target
                if method == "GET" and status == 400 and body.startswith(b"{"):  # (else the HTTP parser's own 400)
                    assert json.loads(body)["errors"][0]["code"] in ("NAME_INVALID", "TAG_INVALID", "DIGEST_INVALID")
    # the compliant cartridge is served on its one spelling, and refused on the others too
    assert raw_request(gw.address, "GET", b"/v2/acx/strong/manifests/1")[0] == 200
    assert raw_request(gw.address, "GET", b"/v2/x/../acx/strong/manifests/1")[0] == 400


def test_refused_paths_never_reach_the_upstream(world: World, gw: RunningGateway) -> None:
    """A malformed or encoded name is refused before forwarding: a PUT under it stores nothing upstream."""
    raw = build_manifest("application/vnd.example.thing.v1", [])
    for target in (b"/v2/lab/x/../y/manifests/v1", b"/v2/lab/%79/manifests/v1", b"/v2/lab//y/manifests/v1"):
        status, _, body = raw_request(gw.address, "PUT", target, raw, {"Content-Type": MEDIA_MANIFEST})
        assert status == 400 and json.loads(body)["errors"][0]["code"] == "NAME_INVALID"
    assert httpx.get(f"http://{world.registry}/v2/lab/y/tags/list").status_code == 404
    assert httpx.get(f"http://{world.registry}/v2/lab/x/y/tags/list").status_code == 404
    # not a distribution API path at all
    assert raw_request(gw.address, "GET", b"/v3/acx/strong/manifests/1")[0] == 404
    assert raw_request(gw.address, "GET", b"/v2/acx/strong/whatever/1")[0] == 404


def _blobs(world: World, name: str) -> list[str]:
    store = RegistryStore(parse_reference(f"{world.registry}/acx/{name}"), StoreOptions())
    doc = json.loads(store.fetch_manifest_raw(world.digests[name])[0])
    return [d["digest"] for d in [doc["config"], *doc["layers"]] if d["digest"] != EMPTY_DIGEST]


def _blob_status(address: str, name: str, digest: str, method: str = "GET") -> int:
    return httpx.request(method, f"http://{address}/v2/acx/{name}/blobs/{digest}").status_code


@pytest.mark.parametrize("seen", [False, True], ids=["unseen", "after-manifest"])
def test_no_blob_of_a_denied_cartridge_is_served(world: World, fresh_gw: RunningGateway, seen: bool) -> None:
    for name in DENIED:
        blobs = _blobs(world, name)
        assert blobs  # the ROM layer at least
        if seen:
            assert httpx.get(f"http://{fresh_gw.address}/v2/acx/{name}/manifests/1",
                             headers={"Accept": MANIFEST_ACCEPT}).status_code == 403
        for digest in blobs:
            assert httpx.get(f"http://{world.registry}/v2/acx/{name}/blobs/{digest}").status_code == 200  # it is there
            # HEAD first: on a gateway that never saw the manifest it walks the tags and decides like GET
            head = httpx.head(f"http://{fresh_gw.address}/v2/acx/{name}/blobs/{digest}")
            assert head.status_code == 403 and head.content == b"", (name, digest)
            assert "acx-gateway-denied" in head.headers and "docker-content-digest" not in head.headers
            resp = httpx.get(f"http://{fresh_gw.address}/v2/acx/{name}/blobs/{digest}")
            assert resp.status_code == 403, (name, digest)
            err = resp.json()["errors"][0]
            assert err["code"] == "DENIED" and "blob_denied" in err["detail"]["codes"]
            assert "build-dag" in err["message"]
            assert _blob_status(fresh_gw.address, name, digest, "HEAD") == 403
    # the compliant cartridge's blobs are served (found by the tag walk on a gateway that never saw the manifest)
    for digest in _blobs(world, "strong"):
        assert _blob_status(fresh_gw.address, "strong", digest) == 200
    # a blob no manifest references is not served from a covered repository; a HEAD of it passes (after the same
    # walk): every push is in that state between a blob's upload and its manifest's PUT, and pushers check with HEAD
    store = RegistryStore(parse_reference(f"{world.registry}/acx/unattested"), StoreOptions())
    orphan = store.push_blob(uuid.uuid4().bytes, "application/octet-stream").digest
    resp = httpx.get(f"http://{fresh_gw.address}/v2/acx/unattested/blobs/{orphan}")
    assert resp.status_code == 403 and resp.json()["errors"][0]["detail"]["codes"] == ["blob_unreferenced"]
    assert _blob_status(fresh_gw.address, "unattested", orphan, "HEAD") == 200
    # a blob the upstream does not have stays the upstream's 404, for GET and HEAD alike
    missing = sha256_digest(uuid.uuid4().bytes)
    assert _blob_status(fresh_gw.address, "unattested", missing, "HEAD") == 404
    assert _blob_status(fresh_gw.address, "unattested", missing) == 404


def test_head_of_a_denied_manifest_is_denied_on_a_fresh_gateway(world: World, fresh_gw: RunningGateway) -> None:
    """HEAD before any GET (nothing cached): by tag and by digest, denied like GET, with no digest header."""
    for name in DENIED:
        for ref in ("1", world.digests[name]):
            head = httpx.head(f"http://{fresh_gw.address}/v2/acx/{name}/manifests/{ref}",
                              headers={"Accept": MANIFEST_ACCEPT})
            assert head.status_code == 403 and head.content == b"", (name, ref)
            assert "acx-gateway-denied" in head.headers and "docker-content-digest" not in head.headers
    ok = httpx.head(f"http://{fresh_gw.address}/v2/acx/strong/manifests/1", headers={"Accept": MANIFEST_ACCEPT})
    assert ok.status_code == 200 and ok.headers["docker-content-digest"] == world.digests["strong"]


def test_cross_repository_mount_of_a_denied_blob_is_refused(world: World, gw: RunningGateway) -> None:
    rom = _blobs(world, "unattested")[-1]
    url = f"http://{gw.address}/v2/lab/stash/blobs/uploads/"
    resp = httpx.post(url, params={"mount": rom, "from": "acx/unattested"})
    assert resp.status_code == 403 and resp.json()["errors"][0]["code"] == "DENIED"
    assert httpx.head(f"http://{world.registry}/v2/lab/stash/blobs/{rom}").status_code == 404
    ok_blob = _blobs(world, "strong")[-1]
    assert httpx.get(f"http://{gw.address}/v2/acx/strong/manifests/1",
                     headers={"Accept": MANIFEST_ACCEPT}).status_code == 200
    resp = httpx.post(url, params={"mount": ok_blob, "from": "acx/strong"})
    assert resp.status_code == 201, resp.text


def test_revocation_closes_the_blobs_too(world: World, gw: RunningGateway, tmp_path: Path) -> None:
    """Blob decisions use the current verdict of the manifest, not the one it had when first served."""
    ref = world.ref("blobflip")
    digest = push_cartridge(world, tmp_path / "cart", ref, "io.github.acme/blobflip-agent")
    att = attest(world, ref, tmp_path / "out", tmp_path / "state")["attestationDigest"]
    world.digests["blobflip"] = digest
    assert httpx.get(f"http://{gw.address}/v2/acx/blobflip/manifests/1",
                     headers={"Accept": MANIFEST_ACCEPT}).status_code == 200
    rom = _blobs(world, "blobflip")[-1]
    assert _blob_status(gw.address, "blobflip", rom) == 200
    res = cli("revoke", att, "--key", world.dir / "ver.key", "--state", tmp_path / "state")
    assert res.exit_code == 0, res.output
    time.sleep(gw.gateway.config.fresh_seconds + 0.1)
    assert _blob_status(gw.address, "blobflip", rom) == 403


BAD_DIGESTS = [b"sha256:" + b"z" * 64, b"sha256:" + b"A" * 64, b"sha256:abc", b"md5:" + b"a" * 32,
               b"sha256:" + "é".encode() * 32, b"sha256:" + b"a" * 63 + b"\xff", b"sha256%3A" + b"a" * 64,
               b"sha256:" + b"a" * 65]


@pytest.mark.parametrize("bad", BAD_DIGESTS, ids=range(len(BAD_DIGESTS)))
def test_malformed_digests_in_any_position_are_400(world: World, gw: RunningGateway, bad: bytes) -> None:
    q = quote_from_bytes(bad, safe=":").encode()
    for method, target in [("GET", b"/v2/lab/open/manifests/" + bad), ("HEAD", b"/v2/acx/strong/manifests/" + bad),
                           ("GET", b"/v2/acx/strong/blobs/" + bad), ("GET", b"/v2/lab/open/blobs/" + bad),
                           ("GET", b"/v2/acx/strong/referrers/" + bad),
                           ("POST", b"/v2/lab/d/blobs/uploads/?digest=" + q),
                           ("POST", b"/v2/lab/d/blobs/uploads/?mount=" + q + b"&from=acx/strong"),
                           ("POST", b"/v2/lab/d/blobs/uploads/?mount=sha256%3A" + b"a" * 64 + b"&from=" + q)]:
        status, _, body = raw_request(gw.address, method, target)
        assert status == 400, (method, target, status, body[:300])
    # an upload session, its bytes sent, finished with a malformed digest: refused before the upstream sees it
    data = uuid.uuid4().bytes * 10
    start = httpx.post(f"http://{gw.address}/v2/lab/d/blobs/uploads/")
    assert start.status_code == 202
    location = httpx.URL(start.headers["location"])
    target = location.raw_path + (b"&" if b"?" in location.raw_path else b"?") + b"digest=" + q
    status, _, _ = raw_request(gw.address, "PUT", target, data, {"Content-Type": "application/octet-stream"})
    assert status == 400
    assert httpx.head(f"http://{world.registry}/v2/lab/d/blobs/{sha256_digest(data)}").status_code == 404
    # a manifest naming a malformed digest (layer or subject) is refused before it is stored
    bad_text = bad.decode("utf-8", "replace")
    for key in ("layers", "subject"):
        doc = json.loads(build_manifest("application/vnd.example.thing.v1", []))
        desc = {"mediaType": "application/octet-stream", "digest": bad_text, "size": 1}
        doc[key] = [desc] if key == "layers" else desc
        raw = json.dumps(doc, ensure_ascii=False).encode()
        put = httpx.put(f"http://{gw.address}/v2/lab/d/manifests/{key}", content=raw,
                        headers={"Content-Type": MEDIA_MANIFEST})
        assert put.status_code == 400 and put.json()["errors"][0]["code"] == "DIGEST_INVALID"
        assert httpx.get(f"http://{world.registry}/v2/lab/d/manifests/{key}",
                         headers={"Accept": MANIFEST_ACCEPT}).status_code == 404


def test_compliant_cartridge_still_pulls_with_skopeo_and_oras(world: World, gw: RunningGateway,
                                                               tmp_path: Path) -> None:
    copied = subprocess.run(["skopeo", "copy", "--src-tls-verify=false", f"docker://{gw.address}/acx/strong:1",
                             f"oci:{tmp_path / 'layout'}:strong"], capture_output=True, timeout=120)
    assert copied.returncode == 0, copied.stderr.decode()
    index = json.loads((tmp_path / "layout" / "index.json").read_bytes())
    assert index["manifests"][0]["digest"] == world.digests["strong"]
    for name in DENIED:
        refused = subprocess.run(["skopeo", "copy", "--src-tls-verify=false", f"docker://{gw.address}/acx/{name}:1",
                                  f"oci:{tmp_path / name}:x"], capture_output=True, timeout=120)
        assert refused.returncode != 0 and "denied" in refused.stderr.decode().lower()
    oras_client = pytest.importorskip("oras.client")
    client = oras_client.OrasClient(hostname=gw.address, insecure=True)
    files = client.pull(target=f"{gw.address}/acx/strong:1", outdir=str(tmp_path / "oras"))
    assert files and all(Path(f).is_file() for f in files)
    # (oras-py reads any 403 as an auth challenge and retries with back-off for ~2 minutes before giving up,
    # so the denied case is shown with skopeo above and with the acx-oci client below)
    # the ORAS CLI (trixie's static binary, tests/support/oras_cli): the compliant cartridge pulls, byte for byte
    binary = oras_binary()
    out = tmp_path / "oras-cli"
    oras(binary, tmp_path, "pull", "--plain-http", "-o", str(out), f"{gw.address}/acx/strong:1")
    fetched = oras(binary, tmp_path, "manifest", "fetch", "--plain-http", f"{gw.address}/acx/strong:1")
    assert sha256_digest(fetched.encode()) == world.digests["strong"]
    assert any(p.is_file() for p in out.rglob("*"))
    for name in DENIED:
        proc = subprocess.run([binary, "manifest", "fetch", "--plain-http", f"{gw.address}/acx/{name}:1"],
                              capture_output=True, env={**os.environ, "HOME": str(tmp_path)}, timeout=120)
        assert proc.returncode != 0, name


def test_client_sees_a_gateway_denial_as_exit_1_with_the_reason(world: World, gw: RunningGateway,
                                                                 tmp_path: Path) -> None:
    ref = world.ref("unattested", gw.address)
    commands = [
        ("resolve", ref, "--trust", world.trust),
        ("policy", "check", ref, "--policy", world.policy, "--trust", world.trust),
        ("pull", ref, "-o", tmp_path / "p", "--trust", world.trust),
        ("attest", ref, "--benchmark", world.bench_ref, "--key", world.dir / "ver.key", "--issuer",
         world.verifier_did, "--competence", 33, "--state", tmp_path / "s", "--cooldown", 0, "-o", tmp_path / "a"),
    ]
    for args in commands:
        res = cli(*args)
        assert res.exit_code == 1, (args[:2], res.exit_code, res.output)
        assert "DENIED by the gateway's policy" in res.output and "no_attestation" in res.output, res.output
        assert "no credentials" not in res.output and "Traceback" not in res.output
    with pytest.raises(GatewayDenied, match="build-dag"):
        open_store(ref).fetch_manifest_raw("1")


def test_verifier_attests_against_the_upstream_then_the_gateway_serves(world: World, gw: RunningGateway,
                                                                       tmp_path: Path) -> None:
    """The supported way to attest a cartridge behind the gateway (docs/operations.md): attest against the upstream."""
    digest = push_cartridge(world, tmp_path / "cart", world.ref("newcomer"), "io.github.acme/newcomer-agent")
    url = f"http://{gw.address}/v2/acx/newcomer/manifests/{digest}"
    assert httpx.get(url, headers={"Accept": MANIFEST_ACCEPT}).status_code == 403
    attest(world, world.ref("newcomer"), tmp_path / "out", tmp_path / "state")
    time.sleep(gw.gateway.config.fresh_seconds + 0.1)
    assert httpx.get(url, headers={"Accept": MANIFEST_ACCEPT}).status_code == 200


def test_compliant_pull_through_the_gateway_fetches_every_blob(world: World, fresh_gw: RunningGateway,
                                                               tmp_path: Path) -> None:
    res = cli("pull", world.ref("strong", fresh_gw.address), "-o", tmp_path / "agent", "--trust", world.trust,
              "--require", "build-dag>=senior")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "agent" / "verified-capabilities.json").is_file()


class _Refuser(BaseHTTPRequestHandler):
    """A registry that refuses everything with 403 DENIED, as Distribution does for missing rights."""

    def do_GET(self) -> None:
        body = b'{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}'
        self.send_response(403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_plain_registry_403_stays_a_registry_error_exit_3(world: World) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuser)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        ref = f"127.0.0.1:{server.server_address[1]}/acx/x:1"
        with pytest.raises(RegistryError) as err:
            open_store(ref).fetch_manifest_raw("1")
        assert not isinstance(err.value, GatewayDenied) and "HTTP 403 DENIED" in str(err.value)
        res = cli("resolve", ref, "--trust", world.trust)
        assert res.exit_code == 3 and "no credentials" in res.output, res.output
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("name", "ok_"), [
    ("acx/strong", True), ("a", True), ("a__b", True), ("a_b", True), ("a--b", True), ("a.b/c-d/e__f", True),
    ("a___b", False), ("a-", False), ("-a", False), ("a..b", False), ("a._b", False), ("A", False), ("a/", False),
    ("a//b", False), ("a" * 255, True), ("a" * 256, False), ("a/" * 127 + "a", True), ("\u0430", False),
])
def test_name_grammar(name: str, ok_: bool) -> None:
    target = f"/v2/{name}/tags/list".encode()
    if ok_:
        assert parse_request(target).name == name
    else:
        with pytest.raises(RequestRefused) as err:
            parse_request(target)
        assert err.value.status == 400


def test_router_matches_each_api_path_once() -> None:
    d = "sha256:" + "a" * 64
    cases = {
        b"/v2/": ("base", ""), b"/v2/_catalog": ("catalog", ""), b"/v2/a/b/tags/list": ("tags", "a/b"),
        f"/v2/a/manifests/{d}".encode(): ("manifests", "a"), b"/v2/a/manifests/v1.0_x-y": ("manifests", "a"),
        f"/v2/a/blobs/{d}".encode(): ("blobs", "a"), b"/v2/a/blobs/uploads/": ("uploads", "a"),
        b"/v2/a/blobs/uploads/3f1c-9e_a=": ("upload", "a"), f"/v2/a/referrers/{d}".encode(): ("referrers", "a"),
        # a repository may itself be called "manifests": the API suffix is the last two segments
        b"/v2/x/manifests/manifests/1": ("manifests", "x/manifests"),
    }
    for raw, (kind, name) in cases.items():
        api = parse_request(raw, b"n=10&last=x")
        assert (api.kind, api.name, api.raw) == (kind, name, raw.decode()) and api.query == "n=10&last=x"
    for raw, query in [(b"/v2/a/manifests/" + b"t" * 129, b""), (b"/v2/a/manifests/.x", b""),
                       (b"/v2/a/blobs/uploads/", b"digest=" + d.encode() + b"&digest=" + d.encode()),
                       (b"/v2/a/blobs/uploads/", b"mount=" + d.encode() + b"&from=..%2Facx"),
                       (b"/v2/a/blobs/uploads/", b"digest=%ff"), (b"/v2/a/tags/list", "é".encode())]:
        with pytest.raises(RequestRefused) as err:
            parse_request(raw, query, "PUT")
        assert err.value.status == 400, raw
    # a malformed tag read or deleted is an unknown manifest (the spec's 404), still refused before forwarding
    for method in ("GET", "HEAD", "DELETE"):
        with pytest.raises(RequestRefused) as err:
            parse_request(b"/v2/a/manifests/.x", b"", method)
        assert (err.value.status, err.value.oci_code) == (404, "MANIFEST_UNKNOWN")
    # a mount without its from is matched as a plain upload POST, the mount gone in any spelling
    api = parse_request(b"/v2/a/blobs/uploads/", b"m%6Funt=" + d.encode() + b"&x=1", "POST")
    assert (api.kind, api.mount, api.query) == ("uploads", None, "x=1")


def test_router_fuzz_gives_a_match_or_a_clean_refusal() -> None:
    """Arbitrary and mutated request targets: an ApiPath with one reading, or RequestRefused (4xx) — nothing else."""
    hyp = pytest.importorskip("hypothesis")
    st = pytest.importorskip("hypothesis.strategies")
    d = "sha256:" + "a" * 64
    seeds = [b"/v2/acx/strong/manifests/1", f"/v2/acx/strong/blobs/{d}".encode(), b"/v2/a/b/blobs/uploads/x-1",
             b"/v2/acx/strong/tags/list", f"/v2/acx/strong/referrers/{d}".encode()]
    pieces = st.sampled_from([b"/", b".", b"..", b"%2e", b"%2F", b"%25", b"\\", b";", b"\xff", "é".encode(), b"A",
                              b"_", b"__", b"-", b":", b"?", b"#", b"\x00", b" "])

    @st.composite
    def mutated(draw: Any) -> bytes:
        seed = bytearray(draw(st.sampled_from(seeds)))
        for _ in range(draw(st.integers(0, 4))):
            at = draw(st.integers(0, len(seed)))
            seed[at:at] = draw(pieces)
        return bytes(seed)

    @hyp.settings(max_examples=1500, deadline=None, database=None)
    @hyp.given(st.one_of(st.binary(max_size=200), mutated()), st.binary(max_size=80))
    def check(path: bytes, query: bytes) -> None:
        try:
            api = parse_request(path, query)
        except RequestRefused as exc:
            assert 400 <= exc.status < 500 and exc.oci_code and exc.message
            return
        assert api.raw.encode() == path and "%" not in api.raw and "\\" not in api.raw
        assert not any(s in (".", "..") for s in api.raw.split("/"))
        if api.name:
            assert NAME_RE.fullmatch(api.name) and f"/{api.name}/" in api.raw

    check()


def test_access_log_shows_the_raw_path_refused(gw: RunningGateway, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="acx_oci.gateway.access")
    target = b"/v2/x/%2e%2e/acx/unattested/manifests/1"
    assert raw_request(gw.address, "GET", target)[0] == 400
    deadline = time.monotonic() + 5
    records: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        records = [json.loads(r.getMessage()) for r in caplog.records if r.name == "acx_oci.gateway.access"]
        if any(r["path"] == target.decode() for r in records):
            break
        time.sleep(0.05)
    mine = [r for r in records if r["path"] == target.decode()]
    assert mine and mine[-1]["status"] == 400 and mine[-1]["decision"] == "refused"
