"""RegistryStore against a real CNCF Distribution registry (and tiny misbehaving HTTP servers)."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import os
import re
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
import tracemalloc
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import sha256_digest
from acx_oci.errors import IntegrityError, NotFoundError, RegistryError, UsageError
from acx_oci.oci import (
    ARTIFACT_CARTRIDGE,
    EMPTY_DIGEST,
    MAX_MANIFEST_BYTES,
    MEDIA_MANIFEST,
    RegistryStore,
    StoreOptions,
    build_manifest,
    open_store,
    parse_challenge,
    parse_reference,
)
from acx_oci.oci.registry import is_loopback

from ..support.env import ROOT
from ..support.registry import Registry, registry_binary

pytestmark = pytest.mark.registry


def _store(registry: str, repo: str | None = None, **opts: object) -> RegistryStore:
    ref = parse_reference(f"{registry}/{repo or 'test/' + uuid.uuid4().hex[:10]}")
    return RegistryStore(ref, StoreOptions(**opts))  # type: ignore[arg-type]


def _skopeo_raw(url: str) -> bytes:
    out = subprocess.run(["skopeo", "inspect", "--raw", "--tls-verify=false", url], capture_output=True, timeout=30)
    assert out.returncode == 0, out.stderr.decode()
    return out.stdout


def _blob_file(reg: Registry, digest: str) -> Path:
    hexd = digest.split(":", 1)[1]
    return reg.root / "data" / "docker" / "registry" / "v2" / "blobs" / "sha256" / hexd[:2] / hexd / "data"


# ---------------------------------------------------------------- exact bytes, skopeo, empty config


def test_manifest_roundtrip_exact_bytes_and_skopeo(registry: str) -> None:
    s = _store(registry)
    layer = s.push_blob(b"rom bytes", "application/octet-stream")
    # deliberately non-canonical JSON (spacing, key order): it must come back byte for byte
    raw = (
        f'{{\n  "schemaVersion": 2,\n  "mediaType": "{MEDIA_MANIFEST}",\n  "artifactType": "{ARTIFACT_CARTRIDGE}",\n'
        f'  "config": {{"mediaType": "application/vnd.oci.empty.v1+json", "size": 2, "digest": "{EMPTY_DIGEST}"}},\n'
        f'  "layers": [{json.dumps(layer.to_json())}]\n}}\n'
    )
    desc = s.push_manifest(raw.encode(), MEDIA_MANIFEST, "v1")
    assert desc.digest == sha256_digest(raw.encode())
    got, media_type, digest = s.fetch_manifest_raw("v1")
    assert got == raw.encode() and media_type == MEDIA_MANIFEST and digest == desc.digest
    assert s.fetch_manifest_raw(desc.digest)[0] == raw.encode()
    assert s.resolve("v1") == desc
    assert s.fetch_manifest("v1").artifact_type == ARTIFACT_CARTRIDGE
    assert _skopeo_raw(f"docker://{registry}/{s.repository}:v1") == raw.encode()
    # the empty config blob was uploaded by push_manifest, not by us
    assert s.fetch_blob(EMPTY_DIGEST) == b"{}"
    assert s.fetch_blob(layer.digest) == b"rom bytes"


def test_tag_list_tags_and_open_store(registry: str) -> None:
    s = _store(registry)
    assert s.list_tags() == []
    raw = build_manifest(ARTIFACT_CARTRIDGE, [s.push_blob(b"x", "text/plain")])
    d = s.push_manifest(raw, MEDIA_MANIFEST)
    s.tag(d.digest, "a")
    s.tag(d.digest, "b")
    assert sorted(s.list_tags()) == ["a", "b"]
    other = open_store(f"{registry}/{s.repository}:a")
    assert isinstance(other, RegistryStore) and other.fetch_manifest_raw("b")[0] == raw


def test_not_found_maps_to_one_line(registry: str) -> None:
    s = _store(registry)
    with pytest.raises(NotFoundError, match=r"HTTP 404 (MANIFEST_UNKNOWN|NAME_UNKNOWN)") as exc:
        s.fetch_manifest_raw("missing")
    assert "\n" not in str(exc.value)
    # the repository is named: a typo in it (acme/dag-agnet) otherwise reads like a missing tag
    assert f"GET manifest {s.repository}:missing: HTTP 404" in str(exc.value), exc.value
    with pytest.raises(NotFoundError):
        s.fetch_blob("sha256:" + "0" * 64)


def test_loopback_detection() -> None:
    for h in ("127.0.0.1:5000", "127.9.9.9", "localhost:1", "[::1]:5000", "::1"):
        assert is_loopback(h), h
    for h in ("10.0.0.1:5000", "ghcr.io", "example.com:443"):
        assert not is_loopback(h), h
    s = RegistryStore(parse_reference("example.com/a/b"))
    assert s.base.startswith("https://")
    assert RegistryStore(parse_reference("example.com/a/b"), StoreOptions(plain_http=True)).base.startswith("http://")
    assert RegistryStore(parse_reference("localhost:5000/a/b")).base.startswith("http://")


def test_parse_challenge() -> None:
    scheme, p = parse_challenge('Bearer realm="https://auth.example/token",service="reg",scope="repository:a/b:pull,push"')
    assert scheme == "bearer" and p["realm"] == "https://auth.example/token"
    assert p["scope"] == "repository:a/b:pull,push" and p["service"] == "reg"


# ---------------------------------------------------------------- integrity


def test_tampered_blob_and_manifest_detected(registry: str, registry_server: Registry) -> None:
    s = _store(registry)
    data = b"original content " + uuid.uuid4().bytes
    d = s.push_blob(data, "text/plain")
    raw = build_manifest(ARTIFACT_CARTRIDGE, [d], annotations={"n": uuid.uuid4().hex})
    m = s.push_manifest(raw, MEDIA_MANIFEST, "t")
    blob = _blob_file(registry_server, d.digest)
    blob.write_bytes(b"X" + data[1:])  # same length, different bytes
    with pytest.raises(IntegrityError, match="digest mismatch"):
        s.fetch_blob(d.digest)
    with pytest.raises(IntegrityError):
        s.fetch_blob_to_file(d.digest, Path(registry_server.root) / "out.bin")
    assert not (Path(registry_server.root) / "out.bin").exists()
    assert m.digest  # the registry itself re-checks stored manifests; see test_lying_registry for ours


def test_lying_registry_manifest_detected() -> None:
    """A registry that serves other bytes than the digest names (or its own header says)."""
    served = build_manifest(ARTIFACT_CARTRIDGE, [])
    wanted = "sha256:" + "a" * 64

    class Liar(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", MEDIA_MANIFEST)
            self.send_header("Docker-Content-Digest", wanted)
            self.send_header("Content-Length", str(len(served)))
            self.end_headers()
            self.wfile.write(served)

        def log_message(self, *a: object) -> None:
            pass

    with _http_server(Liar) as host:
        s = _store(host, "x/y", retries=0)
        with pytest.raises(IntegrityError, match="digest mismatch"):
            s.fetch_manifest_raw(wanted)
        with pytest.raises(IntegrityError, match="digest mismatch"):
            s.fetch_manifest_raw("v1")
        with pytest.raises(IntegrityError, match="digest mismatch"):
            s.fetch_blob(wanted)


def test_oversize_manifest_refused_on_push(registry: str) -> None:
    s = _store(registry)
    big = b'{"schemaVersion":2,"annotations":{"x":"' + b"a" * MAX_MANIFEST_BYTES + b'"}}'
    with pytest.raises(UsageError, match="over 4194304"):
        s.push_manifest(big, MEDIA_MANIFEST, "big")


def test_fetch_blob_max_bytes(registry: str) -> None:
    s = _store(registry)
    d = s.push_blob(b"z" * 5000, "text/plain")
    with pytest.raises(UsageError, match="limit"):
        s.fetch_blob(d.digest, max_bytes=4999)
    assert len(s.fetch_blob(d.digest, max_bytes=5000)) == 5000


# ---------------------------------------------------------------- misbehaving servers


@contextmanager
def _http_server(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    srv = Server(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def test_oversize_manifest_refused_on_read_without_content_length() -> None:
    class Big(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # no Content-Length: the body ends at close

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", MEDIA_MANIFEST)
            self.end_headers()
            try:
                for _ in range(5):
                    self.wfile.write(b" " * (1024 * 1024))
            except OSError:
                pass

        def log_message(self, *a: object) -> None:
            pass

    with _http_server(Big) as host:
        s = _store(host, "x/y", retries=0)
        with pytest.raises(RegistryError, match="exceeds the 4194304-byte limit"):
            s.fetch_manifest_raw("big")


def test_retries_on_5xx_then_success_and_bounded() -> None:
    data = b"payload"
    digest = sha256_digest(data)
    hits: list[str] = []

    class Flaky(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            hits.append(self.path)
            n = len(hits)
            if "always" in self.path or n == 1:
                self.send_response(503)
                body = b'{"errors":[{"code":"UNAVAILABLE","message":"try later"}]}'
            elif n == 2:  # connection reset mid-request
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            else:
                self.send_response(200)
                body = data
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a: object) -> None:
            pass

    with _http_server(Flaky) as host:
        s = _store(host, "x/y", retries=2)
        assert s.fetch_blob(digest) == data
        assert len(hits) == 3
        hits.clear()
        s2 = _store(host, "always/y", retries=2)
        t = time.monotonic()
        with pytest.raises(RegistryError, match="HTTP 503 UNAVAILABLE try later"):
            s2.fetch_blob(digest)
        assert len(hits) == 3 and time.monotonic() - t < 30  # three tries, then the error; wall time a backstop


@pytest.mark.parametrize("host", ["127.0.0.1:1", "10.255.255.1"])
def test_unreachable_registry_fails_fast(host: str) -> None:
    s = RegistryStore(parse_reference(f"{host}/a/b:v1"), StoreOptions(plain_http=True))
    t = time.monotonic()
    # Some sandboxed networks answer for unroutable addresses (an HTTP 404 from a proxy): then the
    # store reports "not found"; either way it must fail fast with one line, never hang.
    with pytest.raises((RegistryError, NotFoundError)) as exc:
        s.fetch_manifest_raw("v1")
    elapsed = time.monotonic() - t
    assert elapsed < 30, elapsed  # a backstop: the mechanism is the refusal or the connect timeout, below
    assert "\n" not in str(exc.value)
    if host == "127.0.0.1:1":
        assert str(exc.value) == "registry 127.0.0.1:1 unreachable: connection refused"
    elif isinstance(exc.value, RegistryError):  # the connect deadline fired, said as such
        assert "unreachable" in str(exc.value), exc.value


def test_silent_registry_times_out() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)  # accepts TCP (kernel backlog) but never answers
    try:
        s = _store(f"127.0.0.1:{sock.getsockname()[1]}", "a/b", timeout=2.0, retries=0)
        t = time.monotonic()
        with pytest.raises(RegistryError, match="no response within 2s"):
            s.fetch_manifest_raw("v1")
        assert time.monotonic() - t < 30  # a backstop: the message above is the 2 s deadline firing
    finally:
        sock.close()


# ---------------------------------------------------------------- streaming and concurrency


def _memprobe(mode: str, ref: str, src: Path, dest: Path) -> dict[str, Any]:
    """Run :mod:`tests.support.memprobe` in a fresh interpreter (its own peak RSS, ``VmHWM``)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "tests.support.memprobe", mode, ref, str(src), str(dest)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_100mib_blob_streams_in_small_memory(registry: str, tmp_path: Path) -> None:
    s = _store(registry)
    src = tmp_path / "big.bin"
    h = hashlib.sha256()
    chunk = os.urandom(1024 * 1024)
    with src.open("wb") as f:
        for i in range(100):
            block = chunk[:-1] + bytes([i])
            h.update(block)
            f.write(block)
    tracemalloc.start()
    try:
        t = time.monotonic()
        d = s.push_blob_file(src, "application/octet-stream")
        up = time.monotonic() - t
        dest = tmp_path / "back.bin"
        t = time.monotonic()
        s.fetch_blob_to_file(d.digest, dest)
        down = time.monotonic() - t
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert d.digest == "sha256:" + h.hexdigest() and d.size == 100 * 1024 * 1024
    assert dest.stat().st_size == d.size
    # RSS: push and download again in a fresh process (to a fresh repository, so it really uploads);
    # its peak RSS (VmHWM) starts at the bare imports, unlike this long-lived pytest process's ru_maxrss.
    child = _memprobe("stream", f"{registry}/test/{uuid.uuid4().hex[:10]}", src, tmp_path / "child.bin")
    assert child["digest"] == d.digest and child["size"] == d.size
    assert (tmp_path / "child.bin").stat().st_size == d.size
    rss_growth_kib = child["after"] - child["before"]
    # control: the same measurement does see a whole-blob load (so the bound below can fail)
    control = _memprobe("control", f"{registry}/test/unused", src, tmp_path / "unused.bin")
    control_kib = control["after"] - control["before"]
    print(f"100 MiB: push {up:.2f}s, fetch {down:.2f}s, traced peak {peak / 2**20:.1f} MiB, "
          f"fresh-process peak RSS growth {rss_growth_kib / 1024:.1f} MiB "
          f"(read_bytes control {control_kib / 1024:.1f} MiB); probe {child}")
    assert peak < 16 * 2**20
    assert control_kib > 90 * 1024, f"control: reading the blob raised peak RSS by only {control_kib} KiB"
    assert rss_growth_kib < 48 * 1024, f"push + download raised the fresh process's peak RSS by {rss_growth_kib} KiB"
    # second push is skipped by HEAD
    assert s.push_blob_file(src, "application/octet-stream") == d


def test_concurrent_fetches_share_one_session(registry: str) -> None:
    s = _store(registry)
    blobs = [s.push_blob(f"blob-{i}".encode() * 100, "text/plain") for i in range(32)]
    with ThreadPoolExecutor(8) as pool:
        out = list(pool.map(lambda d: s.fetch_blob(d.digest), blobs * 4))
    assert out == [f"blob-{i}".encode() * 100 for i in range(32)] * 4


# ---------------------------------------------------------------- auth (htpasswd + docker config.json)


@pytest.fixture()
def auth_registry(tmp_path: Path) -> Iterator[str]:
    bcrypt = pytest.importorskip("bcrypt")
    binary = registry_binary()
    if binary is None:
        pytest.skip("docker-registry not installed")
    (tmp_path / "htpasswd").write_text("alice:" + bcrypt.hashpw(b"s3cret", bcrypt.gensalt(5)).decode() + "\n")
    cfg = tmp_path / "config.yml"
    cfg.write_text(
        f"version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n"
        f"    rootdirectory: {tmp_path / 'data'}\nhttp:\n  addr: 127.0.0.1:0\n"
        f"auth:\n  htpasswd:\n    realm: acx-test\n    path: {tmp_path / 'htpasswd'}\n"
    )
    log = (tmp_path / "registry.log").open("wb")
    proc = subprocess.Popen([binary, "serve", str(cfg)], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while True:
            m = re.search(rb"listening on [^:]+:(\d+)", (tmp_path / "registry.log").read_bytes())
            if m:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("auth registry did not start: " + (tmp_path / "registry.log").read_text()[-400:])
            time.sleep(0.05)
        yield f"127.0.0.1:{int(m.group(1))}"
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
        log.close()


def test_docker_config_basic_auth(auth_registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "dockercfg"
    conf.mkdir()
    monkeypatch.setenv("DOCKER_CONFIG", str(conf))
    with pytest.raises(RegistryError, match="authentication required"):
        _store(auth_registry, "a/b").push_blob(b"x", "text/plain")
    token = base64.b64encode(b"alice:s3cret").decode()
    (conf / "config.json").write_text(json.dumps({"auths": {auth_registry: {"auth": token}}}))
    s = _store(auth_registry, "a/b")
    raw = build_manifest(ARTIFACT_CARTRIDGE, [s.push_blob(b"x", "text/plain")])
    d = s.push_manifest(raw, MEDIA_MANIFEST, "v1")
    assert _store(auth_registry, "a/b").fetch_manifest_raw("v1") == (raw, MEDIA_MANIFEST, d.digest)
    (conf / "config.json").write_text(
        json.dumps({"auths": {auth_registry: {"auth": base64.b64encode(b"alice:wrong").decode()}}})
    )
    with pytest.raises(RegistryError, match="HTTP 401"):
        _store(auth_registry, "a/b").fetch_manifest_raw("v1")


def test_credential_helper(auth_registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "dockercfg"
    conf.mkdir()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    helper = bindir / "docker-credential-acxtest"
    helper.write_text('#!/bin/sh\nread host\necho "{\\"Username\\":\\"alice\\",\\"Secret\\":\\"s3cret\\"}"\n')
    helper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DOCKER_CONFIG", str(conf))
    (conf / "config.json").write_text(json.dumps({"credHelpers": {auth_registry: "acxtest"}}))
    s = _store(auth_registry, "c/d")
    assert s.push_blob(b"helper", "text/plain").size == 6
    (conf / "config.json").write_text(json.dumps({"credsStore": "acxtest"}))
    assert _store(auth_registry, "c/d").fetch_blob(sha256_digest(b"helper")) == b"helper"
    assert shutil.which("docker-credential-acxtest")


def test_a_netrc_entry_for_the_registry_is_never_sent(auth_registry: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials come from the docker config alone (as with docker, ORAS, cosign): requests would read
    ``~/.netrc`` on every request and send a matching entry as Basic auth."""
    conf = tmp_path / "dockercfg"
    conf.mkdir()
    monkeypatch.setenv("DOCKER_CONFIG", str(conf))
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine {auth_registry.split(':')[0]} login alice password s3cret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    import requests

    plain = requests.get(f"http://{auth_registry}/v2/", timeout=5)  # requests itself sends the netrc entry
    assert plain.status_code == 200
    with pytest.raises(RegistryError, match="authentication required"):
        _store(auth_registry, "n/r").push_blob(b"x", "text/plain")


def test_the_proxy_environment_is_honoured_on_every_request(registry: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY carries every request (read once per host, not per request); NO_PROXY naming the host
    goes direct."""
    import threading
    from http.server import BaseHTTPRequestHandler

    from ..support.httpserver import QuietHTTPServer

    seen: list[str] = []

    class Proxy(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)  # an absolute URL: the client spoke to us as its proxy
            self.send_response(502)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = QuietHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.server_address[1]}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        s = _store(registry, "p/x")
        for _ in range(2):
            with pytest.raises(RegistryError):
                s.fetch_manifest_raw("sha256:" + "0" * 64)
        assert len(seen) >= 2 and all(p.startswith(f"http://{registry}/v2/p/x/manifests/") for p in seen), seen
        monkeypatch.setenv("NO_PROXY", registry.split(":")[0])
        before = len(seen)
        with pytest.raises(NotFoundError):
            _store(registry, "p/x").fetch_manifest_raw("sha256:" + "0" * 64)
        assert len(seen) == before
    finally:
        server.shutdown()
