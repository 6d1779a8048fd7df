"""Attacks on the gateway that its first hardening missed (issue 14, items 1-2): each test is one attack."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import h11
import httpx
import pytest

from acx_oci.crypto import sha256_digest
from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, RunningGateway, ServerLimits, start_in_thread
from acx_oci.gateway.proxy import DENIED_HEADER, denied
from acx_oci.model import MEDIA_ROM
from acx_oci.oci import ARTIFACT_CARTRIDGE, EMPTY_DIGEST, MEDIA_MANIFEST, Descriptor, build_manifest
from acx_oci.trust import load_trust

from ..support.gateway_proc import minimal_policy_files
from ..support.httpserver import QuietHTTPServer


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return minimal_policy_files(tmp_path_factory.mktemp("gwattacks"))


def _start(registry: str, files: tuple[Path, Path], limits: ServerLimits) -> RunningGateway:
    policy, trust = files
    return start_in_thread(GatewayConfig(upstream=f"http://{registry}", policy=load_policy(policy),
                                         trust=load_trust(trust)), limits=limits)


def _connect(address: str) -> socket.socket:
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def _closed(sock: socket.socket, wait: float = 5.0) -> bool:
    sock.settimeout(wait)
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_slow_request_bodies_at_the_limit_do_not_lock_out_a_compliant_client(
        registry: str, files: tuple[Path, Path]) -> None:
    """A body trickled a byte at a time (inside the body idle timeout) is a half-sent request too: at the
    connection limit, the slowest such sender makes room, not the newcomer."""
    running = _start(registry, files, ServerLimits(header_seconds=60.0, body_idle_seconds=60.0, max_connections=8))
    try:
        socks = []
        for _ in range(8):
            s = _connect(running.address)
            s.sendall(b"PUT /v2/plain/x/manifests/t HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 1000\r\n\r\n{")
            socks.append(s)
        time.sleep(1.5)  # past the one-second grace a new request gets
        assert running.guard.open == 8
        resp = httpx.get(f"http://{running.address}/healthz", timeout=5)
        assert resp.status_code == 200
        assert running.guard.dropped == 1
        assert _closed(socks[0])  # the slowest (the oldest: one byte in 1.5 s) was cut
        assert not _closed(socks[-1], wait=0.2)
        for s in socks:
            s.close()
    finally:
        running.stop()


@pytest.mark.parametrize("message", [
    "x" * 399 + " tail",  # the 400-character cut lands on a space
    "level attestation refused: " + "problem; " * 80,
    "nul\x00 bell\x07 escape\x1b del\x7f — ünïcode",
    "\u2003\u00a0",
], ids=["cut-on-a-space", "many-problems", "control-characters", "unicode-spaces"])
def test_a_denial_header_is_always_a_valid_header_value(message: str) -> None:
    """A long or odd denial reason must still go out as a header: h11 refused trailing whitespace and control
    characters, so the client got a dropped connection and the log a traceback instead of the 403."""
    response = denied(message)
    headers = [(k, v) for k, v in response.raw_headers if k == DENIED_HEADER.encode()]
    assert len(headers) == 1
    h11.Response(status_code=403, headers=headers)  # raises LocalProtocolError for an illegal value
    assert headers[0][1] and len(headers[0][1]) <= 400


@pytest.fixture(scope="module")
def gw(registry: str, files: tuple[Path, Path]) -> Iterator[RunningGateway]:
    running = _start(registry, files, ServerLimits())
    try:
        yield running
    finally:
        running.stop()


def _deep_manifest(registry: str, repository: str, depth: int) -> bytes:
    """A valid image manifest with one extra member nested ``depth`` arrays deep (Go's decoder takes 10,000);
    its empty config is uploaded to ``repository`` so the registry accepts it."""
    start = httpx.post(f"http://{registry}/v2/{repository}/blobs/uploads/")
    location = httpx.URL(f"http://{registry}").join(start.headers["location"])
    up = httpx.put(location.copy_merge_params({"digest": EMPTY_DIGEST}), content=b"{}",
                   headers={"Content-Type": "application/octet-stream"})
    assert up.status_code == 201, up.text
    raw = build_manifest("application/vnd.example.deep", [])
    return raw[:-1] + b',"x":' + b"[" * depth + b"]" * depth + b"}"


def test_a_manifest_nested_past_the_stack_is_400_on_put_and_no_500_on_pull(
        registry: str, gw: RunningGateway, caplog: pytest.LogCaptureFixture) -> None:
    """Python's decoder gives up (RecursionError) long before the registry's does: pushed through the gateway it
    was a 500 (and the upstream never asked); stored upstream, every GET/HEAD of it and every blob walk of its
    repository was a 500 with a traceback."""
    deep = _deep_manifest(registry, "acx/deep", 3000)
    base = f"http://{gw.address}/v2"
    put = httpx.put(f"{base}/acx/deep/manifests/through", content=deep, headers={"Content-Type": MEDIA_MANIFEST})
    assert put.status_code == 400, put.text
    assert put.json()["errors"][0]["code"] == "MANIFEST_INVALID"
    assert httpx.get(f"http://{registry}/v2/acx/deep/manifests/through",
                     headers={"Accept": MEDIA_MANIFEST}).status_code == 404  # refused before the upstream saw it
    direct = httpx.put(f"http://{registry}/v2/acx/deep/manifests/stored", content=deep,
                       headers={"Content-Type": MEDIA_MANIFEST})
    assert direct.status_code == 201, direct.text  # the registry itself takes it
    with caplog.at_level(logging.ERROR):
        for method in ("GET", "HEAD"):
            resp = httpx.request(method, f"{base}/acx/deep/manifests/stored", headers={"Accept": MEDIA_MANIFEST})
            # unreadable here, perhaps a cartridge to a Go client: denied, never served unjudged (and never a 500)
            assert resp.status_code == 403, (method, resp.status_code)
        blob = httpx.get(f"{base}/acx/deep/blobs/sha256:{'0' * 64}")  # unknown: the ledger walks the tags
        assert blob.status_code in (403, 404), blob.status_code
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def _push_blob(registry: str, repository: str, data: bytes) -> str:
    """A blob straight into the upstream (no manifest references it: the gateway refuses it in a covered repo)."""
    digest = sha256_digest(data)
    start = httpx.post(f"http://{registry}/v2/{repository}/blobs/uploads/")
    location = httpx.URL(f"http://{registry}").join(start.headers["location"])
    put = httpx.put(location.copy_merge_params({"digest": digest}), content=data,
                    headers={"Content-Type": "application/octet-stream"})
    assert put.status_code == 201, put.text
    return digest


def _exchange(sock: socket.socket, data: bytes) -> bytes:
    """Send, then read one response with a Content-Length (head and body)."""
    sock.sendall(data)
    out = b""
    while b"\r\n\r\n" not in out:
        chunk = sock.recv(65536)
        assert chunk, out
        out += chunk
    head, body = out.split(b"\r\n\r\n", 1)
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk
        body += chunk
    return head + b"\r\n\r\n" + body


@pytest.mark.parametrize("framing", ["chunked-and-length", "get-with-a-body"])
def test_no_request_is_smuggled_to_the_upstream_past_the_blob_gate(registry: str, gw: RunningGateway,
                                                                   framing: str) -> None:
    """The client's Content-Length was forwarded as is: with ``Transfer-Encoding: chunked`` next to it (the body is
    read chunked) or on a GET whose body is not sent on, the upstream read the wrong number of body bytes and
    took the rest as a second request on the gateway's pooled connection, whose answer went to the next request
    on it. Sent through the gateway: a refused blob, served to the attacker's next request."""
    secret = b"the bytes a covered repository refuses to an unreferenced blob GET " + uuid.uuid4().bytes
    digest = _push_blob(registry, "acx/secret", secret)
    assert httpx.get(f"http://{gw.address}/v2/acx/secret/blobs/{digest}").status_code == 403
    smuggled = f"GET /v2/acx/secret/blobs/{digest} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    if framing == "chunked-and-length":
        first = (b"POST /v2/plain/x/blobs/uploads/ HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n"
                 b"Content-Length: 0\r\n\r\n" + b"%x\r\n%b\r\n0\r\n\r\n" % (len(smuggled), smuggled))
    else:
        # the next request on the pooled connection is the attacker's own, with the smuggled one as its body
        probe = f"GET /v2/plain/x/tags/list HTTP/1.1\r\nHost: gw\r\nContent-Length: {len(smuggled)}\r\n\r\n"
        first = probe.encode() + smuggled
    with _connect(gw.address) as sock:
        sock.settimeout(10)
        _exchange(sock, first)
        second = _exchange(sock, b"GET /v2/ HTTP/1.1\r\nHost: gw\r\n\r\n")
    assert secret not in second
    assert second.startswith(b"HTTP/1.1 200"), second[:200]
    assert second.endswith(b"{}"), second[-200:]  # the answer to GET /v2/, nothing else


def test_responses_nobody_reads_at_the_limit_do_not_lock_out_a_compliant_client(
        registry: str, files: tuple[Path, Path]) -> None:
    """The slow-read twin of the trickled body: a blob GET whose client never reads holds its connection (and an
    upstream one) for as long as it likes; at the limit it is dropped for a compliant newcomer."""
    digest = _push_blob(registry, "plain/big", uuid.uuid4().bytes * (24 * 1024 * 1024 // 16))  # 24 MiB
    running = _start(registry, files, ServerLimits(header_seconds=60.0, max_connections=4))
    try:
        socks = []
        for _ in range(4):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            host, port = running.address.rsplit(":", 1)
            s.connect((host, int(port)))
            s.sendall(f"GET /v2/plain/big/blobs/{digest} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            socks.append(s)
        time.sleep(1.5)
        assert running.guard.open == 4
        resp = httpx.get(f"http://{running.address}/healthz", timeout=5)
        assert resp.status_code == 200
        assert running.guard.dropped == 1
        for s in socks:
            s.close()
    finally:
        running.stop()


def _put_manifest(registry: str, repository: str, tag: str, raw: bytes) -> None:
    resp = httpx.put(f"http://{registry}/v2/{repository}/manifests/{tag}", content=raw,
                     headers={"Content-Type": MEDIA_MANIFEST})
    assert resp.status_code == 201, resp.text


def test_a_flood_of_wrapper_manifests_cannot_make_the_gateway_forget_a_denied_cartridge(
        registry: str, files: tuple[Path, Path]) -> None:
    """Once the gateway has seen a denied cartridge, its ROM layer stays refused even through a wrapper manifest.
    The ledger was one LRU: GETs of manifests naming enough other blobs (free with foreign-layer descriptors,
    which the registry takes without the blobs) evicted the cartridge's fact, and the wrapper alone then decided."""
    repo = f"acx/flood{uuid.uuid4().hex[:8]}"
    _push_blob(registry, repo, b"{}")
    rom = Descriptor(MEDIA_ROM, _push_blob(registry, repo, b'{"the": "denied ROM"}'), 21)
    cart = build_manifest(ARTIFACT_CARTRIDGE, [rom])  # denied: not even a readable cartridge
    _put_manifest(registry, repo, "cart", cart)
    wrap = Descriptor("application/octet-stream", rom.digest, rom.size)
    _put_manifest(registry, repo, "wrap", build_manifest("application/vnd.example.sbom", [wrap]))
    real = [Descriptor("application/octet-stream", _push_blob(registry, repo, b"filler %d" % i), 8 + len(str(i)))
            for i in range(30)]
    _put_manifest(registry, repo, "real", build_manifest("application/vnd.example.sbom", real))
    foreign = [Descriptor("application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", sha256_digest(b"%d" % i), 1,
                          ) for i in range(200)]
    foreign_raw = json.loads(build_manifest("application/vnd.example.sbom", foreign))
    for layer in foreign_raw["layers"]:
        layer["urls"] = ["https://example.com/layer"]
    _put_manifest(registry, repo, "foreign", json.dumps(foreign_raw).encode())

    running = _start(registry, files, ServerLimits())
    running.gateway.blobs.max_entries = 20  # the 200,000 of a real gateway, scaled to the flood
    base = f"http://{running.address}/v2/{repo}"
    accept = {"Accept": MEDIA_MANIFEST}
    try:
        assert httpx.get(f"{base}/manifests/cart", headers=accept).status_code == 403  # seen, denied
        assert httpx.get(f"{base}/manifests/wrap", headers=accept).status_code == 200
        assert httpx.get(f"{base}/blobs/{rom.digest}").status_code == 403
        before = len(running.gateway.blobs)
        assert httpx.get(f"{base}/manifests/foreign", headers=accept).status_code == 200
        assert len(running.gateway.blobs) == before  # foreign layers are not the registry's blobs: not recorded
        assert httpx.get(f"{base}/manifests/real", headers=accept).status_code == 200  # 30 facts: past the bound
        assert httpx.get(f"{base}/manifests/wrap", headers=accept).status_code == 200
        resp = httpx.get(f"{base}/blobs/{rom.digest}")
        assert resp.status_code == 403, resp.text
        assert sha256_digest(cart) in resp.text  # refused for the cartridge's sake
    finally:
        running.stop()


class _RangeRegistry(BaseHTTPRequestHandler):
    """A registry that honours ``Range`` on manifests (Distribution does not; others may)."""

    manifest = build_manifest(ARTIFACT_CARTRIDGE, [Descriptor(MEDIA_ROM, "sha256:" + "1" * 64, 10)])

    def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for k, v in {"Content-Length": str(len(body)), **headers}.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:
        if "/manifests/" not in self.path:
            self._answer(404, b'{"errors":[{"code":"NAME_UNKNOWN","message":"no"}]}', {})
            return
        raw, wanted = self.manifest, self.headers.get("Range")
        headers = {"Content-Type": MEDIA_MANIFEST, "Docker-Content-Digest": sha256_digest(raw)}
        if wanted and wanted.startswith("bytes="):
            first, _, last = wanted[len("bytes="):].partition("-")
            end = int(last) if last else len(raw) - 1
            headers["Content-Range"] = f"bytes {first}-{end}/{len(raw)}"
            self._answer(206, raw[int(first):end + 1], headers)
            return
        self._answer(200, raw, headers)

    do_HEAD = do_GET

    def log_message(self, *args: object) -> None:
        pass


def test_a_denied_manifest_cannot_be_read_in_range_pieces(files: tuple[Path, Path]) -> None:
    """A manifest GET with ``Range`` went to the upstream as is, and any answer but 200 was relayed unjudged: from
    a registry that honours ranges, a denied cartridge's manifest came out in 206 pieces."""
    server = QuietHTTPServer(("127.0.0.1", 0), _RangeRegistry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    running = _start(f"127.0.0.1:{server.server_address[1]}", files, ServerLimits())
    try:
        for wanted in ("bytes=0-99", "bytes=100-"):
            resp = httpx.get(f"http://{running.address}/v2/acx/x/manifests/1",
                             headers={"Accept": MEDIA_MANIFEST, "Range": wanted})
            assert resp.status_code in (403, 502), (wanted, resp.status_code)
            assert resp.content not in _RangeRegistry.manifest
    finally:
        running.stop()
        server.shutdown()


class _Recorder(BaseHTTPRequestHandler):
    """An upstream that records every request target and answers 202 (a registry that may mount from anywhere)."""

    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.seen.append(self.path)
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.send_header("Location", "/v2/lab/y/blobs/uploads/u1")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_mount_without_from_never_reaches_the_upstream(files: tuple[Path, Path]) -> None:
    """``?mount=`` without ``from=`` went through unjudged: a registry that mounts from-less blobs out of any
    repository (the OCI spec allows it; Distribution does not) would copy a denied cartridge's ROM out of a covered
    repository into an uncovered one, where its GET is not gated. It goes on as a plain upload POST, the mount
    dropped in every spelling (the spec's answer to a mount a registry does not do: 202 and a session)."""
    server = QuietHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    running = _start(f"127.0.0.1:{server.server_address[1]}", files, ServerLimits())
    try:
        digest = "sha256:" + "2" * 64
        resp = httpx.post(f"http://{running.address}/v2/lab/y/blobs/uploads/", params={"mount": digest})
        assert resp.status_code == 202, resp.text
        resp = httpx.post(f"http://{running.address}/v2/lab/y/blobs/uploads/?m%6funt={digest}&x=1")
        assert resp.status_code == 202, resp.text
        assert _Recorder.seen == ["/v2/lab/y/blobs/uploads/", "/v2/lab/y/blobs/uploads/?x=1"]
    finally:
        running.stop()
        server.shutdown()


def test_a_response_nobody_reads_is_closed_and_its_upstream_connection_freed(registry: str,
                                                                           files: tuple[Path, Path]) -> None:
    """A download the client stops reading held its client connection and one of the upstream pool's (200) for
    as long as the client liked: two hundred such clients stalled every request that needs the upstream."""
    digest = _push_blob(registry, "plain/big", uuid.uuid4().bytes * (24 * 1024 * 1024 // 16))  # 24 MiB
    running = _start(registry, files, ServerLimits(body_idle_seconds=1.0))
    slots = running.gateway.client._transport._slots  # type: ignore[attr-defined]  # the upstream pool's
    free = slots._value
    try:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        host, port = running.address.rsplit(":", 1)
        s.connect((host, int(port)))
        s.sendall(f"GET /v2/plain/big/blobs/{digest} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        time.sleep(0.5)
        assert slots._value == free - 1  # the download holds an upstream connection
        deadline = time.monotonic() + 10
        while slots._value != free and time.monotonic() < deadline:
            time.sleep(0.1)
        assert slots._value == free  # released: the stalled response was closed
        s.settimeout(5)
        received = 0
        with contextlib.suppress(ConnectionResetError):
            while chunk := s.recv(1 << 20):
                received += len(chunk)
        assert received < 24 * 1024 * 1024  # cut, not completed
        s.close()
    finally:
        running.stop()


def test_a_manifest_with_a_duplicate_member_is_400_before_the_upstream(registry: str, gw: RunningGateway) -> None:
    """Go's decoder takes the last of two equal members, Python's I-JSON reader refuses: never stored upstream."""
    raw = build_manifest("application/vnd.example.dup", [])
    dup = raw[:-1] + b',"artifactType":"' + ARTIFACT_CARTRIDGE.encode() + b'"}'
    resp = httpx.put(f"http://{gw.address}/v2/acx/dup/manifests/one", content=dup,
                     headers={"Content-Type": MEDIA_MANIFEST})
    assert resp.status_code == 400, resp.text
    assert resp.json()["errors"][0]["detail"]["codes"] == ["schema_invalid"]
    assert httpx.get(f"http://{registry}/v2/acx/dup/manifests/one", headers={"Accept": MEDIA_MANIFEST}).status_code \
        == 404


class _StatusRegistry(BaseHTTPRequestHandler):
    """A registry that indexes manifests by sha512 too and holds one status list; it records DELETEs."""

    manifest = build_manifest("application/vnd.acx.status-list.v1", [])
    deletes: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        body = self.manifest
        self.send_response(200)
        self.send_header("Content-Type", MEDIA_MANIFEST)
        self.send_header("Docker-Content-Digest", sha256_digest(body))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(body)

    do_HEAD = do_GET

    def do_DELETE(self) -> None:
        self.deletes.append(self.path)
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_status_list_cannot_be_deleted_by_its_sha512_digest(files: tuple[Path, Path]) -> None:
    """Only ``sha256:`` references were looked up before a DELETE: the same list named by sha512 went through."""
    server = QuietHTTPServer(("127.0.0.1", 0), _StatusRegistry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    running = _start(f"127.0.0.1:{server.server_address[1]}", files, ServerLimits())
    try:
        ref = "sha512:" + hashlib.sha512(_StatusRegistry.manifest).hexdigest()
        resp = httpx.delete(f"http://{running.address}/v2/acx/x/manifests/{ref}")
        assert resp.status_code in (400, 403), resp.text  # refused (or unreadable here: sha256 only), not forwarded
        assert _StatusRegistry.deletes == []
    finally:
        running.stop()
        server.shutdown()
