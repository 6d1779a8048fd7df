"""The gateway's connection layer and body caps against hostile clients (issue 14, item 2).

Fast tests run a gateway in a thread with short deadlines; the two acceptance tests (``slow``) run
``python -m acx_oci gateway`` as a real subprocess (its memory and file descriptors are its own).
"""

from __future__ import annotations

import json
import logging
import resource
import select
import selectors
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from acx_oci.crypto import sha256_digest
from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, RunningGateway, ServerLimits, start_in_thread
from acx_oci.gateway.limits import connection_budget, raise_nofile_limit
from acx_oci.oci import (
    EMPTY_JSON,
    MAX_MANIFEST_BYTES,
    MEDIA_EMPTY,
    MEDIA_MANIFEST,
    RegistryStore,
    StoreOptions,
    build_manifest,
    parse_reference,
)
from acx_oci.trust import load_trust

from ..support.gateway_proc import GatewayProcess, minimal_policy_files

LIMITS = ServerLimits(header_seconds=1.0, idle_seconds=1.0, body_idle_seconds=1.0, linger_seconds=2.0)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return minimal_policy_files(tmp_path_factory.mktemp("gwlimits"))


def _start(registry: str, files: tuple[Path, Path], limits: ServerLimits) -> RunningGateway:
    policy, trust = files
    return start_in_thread(GatewayConfig(upstream=f"http://{registry}", policy=load_policy(policy),
                                         trust=load_trust(trust)), limits=limits)


@pytest.fixture(scope="module")
def gw(registry: str, files: tuple[Path, Path]) -> Iterator[RunningGateway]:
    running = _start(registry, files, LIMITS)
    try:
        yield running
    finally:
        running.stop()


def _connect(address: str) -> socket.socket:
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def _read_until_closed(sock: socket.socket, limit: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes; and when it closed (monotonic)."""
    sock.settimeout(limit)
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except ConnectionResetError:
        pass
    return out, time.monotonic()


def _read_response(sock: socket.socket) -> tuple[bytes, bytes]:
    """One response with a Content-Length: its head and body."""
    sock.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length"))
    while len(body) < length:
        body += sock.recv(65536)
    return head, body


def test_partial_headers_get_408_and_close_at_the_deadline(gw: RunningGateway) -> None:
    started = time.monotonic()
    sock = _connect(gw.address)
    sock.sendall(b"GET /v2/ HTTP/1.1\r\nHost: x\r\n")  # never the blank line
    out, closed = _read_until_closed(sock, 10)
    assert out.startswith(b"HTTP/1.1 408 ")
    assert 0.9 <= closed - started < 3.0


def test_a_trickled_request_line_is_cut_at_the_deadline_not_reset_by_each_byte(gw: RunningGateway) -> None:
    sock = _connect(gw.address)
    started = time.monotonic()
    closed_at = None
    for byte in b"GET /v2/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200:
        try:
            sock.send(bytes([byte]))
        except OSError:
            closed_at = time.monotonic()
            break
        r, _, _ = select.select([sock], [], [], 0.1)
        if r:
            closed_at = time.monotonic()
            break
    assert closed_at is not None, "a request trickled for 20 s was never cut"
    assert closed_at - started < 3.0


def test_a_silent_connection_is_closed_at_the_deadline(gw: RunningGateway) -> None:
    started = time.monotonic()
    sock = _connect(gw.address)
    out, closed = _read_until_closed(sock, 10)
    assert out == b""  # nothing asked, nothing answered
    assert 0.9 <= closed - started < 3.0


def test_keep_alive_idle_timeout(gw: RunningGateway) -> None:
    sock = _connect(gw.address)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    started = time.monotonic()
    out, closed = _read_until_closed(sock, 10)
    assert out.startswith(b"HTTP/1.1 200 ") and b'"status":"ok"' in out
    assert 0.9 <= closed - started < 3.0


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_stalled_blob_upload_is_closed_after_the_body_idle_timeout(gw: RunningGateway) -> None:
    errors = _Records()
    logging.getLogger("uvicorn.error").addHandler(errors)  # uvicorn's loggers do not propagate to caplog's
    try:
        _stalled_upload(gw)
        time.sleep(0.3)
    finally:
        logging.getLogger("uvicorn.error").removeHandler(errors)
    assert not errors.records, errors.records[0].getMessage()  # a client cut off is not a server error


def _stalled_upload(gw: RunningGateway) -> None:
    sock = _connect(gw.address)
    sock.sendall(b"PATCH /v2/plain/x/blobs/uploads/nope HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n"
                 b"Content-Type: application/octet-stream\r\n\r\n" + b"x" * 10)
    started = time.monotonic()
    _, closed = _read_until_closed(sock, 15)
    assert closed - started < 4.0


def test_manifest_put_with_a_declared_length_over_4_mib_is_413_before_the_body(gw: RunningGateway) -> None:
    size = MAX_MANIFEST_BYTES + 1
    sock = _connect(gw.address)
    sock.sendall(b"PUT /v2/plain/x/manifests/big HTTP/1.1\r\nHost: x\r\nContent-Type: " + MEDIA_MANIFEST.encode()
                 + b"\r\nContent-Length: " + str(size).encode() + b"\r\n\r\n")
    head, raw = _read_response(sock)  # answered without a body byte sent
    assert head.startswith(b"HTTP/1.1 413 ")
    body = json.loads(raw)
    assert body["errors"][0]["code"] == "SIZE_INVALID"
    assert "expected ≤ 4 MiB" in body["errors"][0]["message"]
    # lingering close: the body the client still sends is read and dropped, then the connection closes (no reset)
    sock.sendall(b"m" * size)
    rest, _ = _read_until_closed(sock, 10)
    assert rest == b""


def test_chunked_manifest_put_over_4_mib_is_413_and_the_client_sees_it(gw: RunningGateway) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(12):  # 6 MiB, chunked (no Content-Length)
            yield b"{" * (512 * 1024)

    resp = httpx.put(f"http://{gw.address}/v2/plain/x/manifests/big", content=chunks(),
                     headers={"Content-Type": MEDIA_MANIFEST}, timeout=20)
    assert resp.status_code == 413
    assert resp.json()["errors"][0]["code"] == "SIZE_INVALID"


def test_a_manifest_under_the_cap_still_reaches_the_handler_and_the_upstream(gw: RunningGateway,
                                                                            registry: str) -> None:
    st = RegistryStore(parse_reference(f"{gw.address}/plain/x"), StoreOptions(plain_http=True))
    d = st.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    raw = build_manifest("application/vnd.example.thing", [d])
    resp = httpx.put(f"http://{gw.address}/v2/plain/x/manifests/small", content=iter([raw[:10], raw[10:]]),
                     headers={"Content-Type": MEDIA_MANIFEST})
    assert resp.status_code == 201, resp.text
    upstream = RegistryStore(parse_reference(f"{registry}/plain/x"), StoreOptions(plain_http=True))
    assert upstream.fetch_manifest_raw("small")[0] == raw


def test_at_the_connection_limit_the_oldest_half_open_connection_is_dropped(registry: str,
                                                                           files: tuple[Path, Path]) -> None:
    running = _start(registry, files, ServerLimits(header_seconds=60.0, max_connections=8))
    try:
        socks = [_connect(running.address) for _ in range(8)]
        for s in socks:
            s.sendall(b"GET /v2/ HTTP/1.1\r\nHost: x\r\n")
        time.sleep(0.3)
        assert running.guard.open == 8
        # a compliant client at the limit is served; room is made by dropping the oldest half-open connection
        resp = httpx.get(f"http://{running.address}/healthz", timeout=5)
        assert resp.status_code == 200
        assert running.guard.dropped >= 1
        oldest, _ = _read_until_closed(socks[0], 5)
        assert oldest == b""
        socks[-1].setblocking(False)
        with pytest.raises(BlockingIOError):
            socks[-1].recv(1)  # the newest half-open one is still open
        for s in socks:
            s.close()
    finally:
        running.stop()


def test_a_flood_three_times_the_limit_displaces_itself(registry: str, files: tuple[Path, Path]) -> None:
    running = _start(registry, files, ServerLimits(header_seconds=60.0, max_connections=100))
    try:
        socks = []
        for _ in range(300):
            s = _connect(running.address)
            s.sendall(b"GET /v2/ HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)
        time.sleep(0.5)
        with httpx.Client(timeout=5) as client:
            assert client.get(f"http://{running.address}/healthz").status_code == 200
        assert running.guard.dropped >= 200
        assert running.guard.open <= 100
        for s in socks:
            s.close()
    finally:
        running.stop()


def test_soft_nofile_limit_is_raised_to_the_hard_limit() -> None:
    soft = raise_nofile_limit()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert soft == resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert hard == resource.RLIM_INFINITY or soft == hard
    assert connection_budget(ServerLimits(), 20000) == 15000
    assert connection_budget(ServerLimits(max_connections=50), 20000) == 50


@pytest.mark.slow
def test_a_1_5_gb_chunked_manifest_put_is_413_in_bounded_memory(registry: str, files: tuple[Path, Path]) -> None:
    """Acceptance: 1.5 GB streamed as a chunked manifest PUT -> 413; the gateway's peak RSS stays under 150 MB."""
    with GatewayProcess(registry, files) as proc:
        total = 1536 * 1024 * 1024
        status, sent = proc.chunked_put("/v2/plain/big/manifests/huge", total)
        peak = proc.peak_rss_kib()
        # a client that ignores the answer and keeps sending: cut after the lingering bound, memory still flat
        _, blind_sent = proc.chunked_put("/v2/plain/big/manifests/huge", total, watch=False)
        blind_peak = proc.peak_rss_kib()
        # a 300 MB blob upload through the gateway streams too (monolithic PUT, chunked)
        blob_status = proc.blob_upload("plain/big", 300 * 1024 * 1024)
        blob_peak = proc.peak_rss_kib()
    print(f"1.5 GB manifest PUT: HTTP {status} after {sent / 2**20:.0f} MiB sent; gateway peak RSS "
          f"{peak / 1024:.1f} MB; a blind sender cut after {blind_sent / 2**20:.0f} MiB, peak "
          f"{blind_peak / 1024:.1f} MB; after a 300 MB blob upload {blob_peak / 1024:.1f} MB")
    assert status == 413
    assert sent < total  # the client saw the answer and stopped
    assert peak < 150 * 1024
    assert blind_sent < 256 * 2**20  # 4 MiB read, 16 MiB drained, then closed (plus socket buffers)
    assert blind_peak < 150 * 1024
    assert blob_status == 201
    assert blob_peak < 150 * 1024


def _push_image(registry: str, repository: str, tag: str) -> None:
    """A plain OCI image (config + one layer) for skopeo to inspect."""
    import gzip
    import io
    import tarfile

    st = RegistryStore(parse_reference(f"{registry}/{repository}"), StoreOptions(plain_http=True))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("hello.txt")
        info.size = 6
        tar.addfile(info, io.BytesIO(b"hello\n"))
    layer = st.push_blob(gzip.compress(buf.getvalue(), mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip")
    config = st.push_blob(json.dumps({"architecture": "amd64", "os": "linux",
                                      "rootfs": {"type": "layers", "diff_ids": []}}).encode(),
                          "application/vnd.oci.image.config.v1+json")
    manifest = {"schemaVersion": 2, "mediaType": MEDIA_MANIFEST,
                "config": {"mediaType": config.media_type, "digest": config.digest, "size": config.size},
                "layers": [{"mediaType": layer.media_type, "digest": layer.digest, "size": layer.size}]}
    st.push_manifest(json.dumps(manifest).encode(), MEDIA_MANIFEST, tag)


def _skopeo_inspect(address: str, ref: str) -> tuple[subprocess.CompletedProcess[bytes], float]:
    started = time.monotonic()
    done = subprocess.run(["skopeo", "inspect", "--tls-verify=false", f"docker://{address}/{ref}"],
                          capture_output=True, timeout=60)
    return done, time.monotonic() - started


HALF_OPEN = 5000  # scaled down if RLIMIT_NOFILE (20,000 on the test machine) leaves less for both processes
DEADLINE = 5.0


@pytest.mark.slow
def test_5000_half_open_connections_do_not_keep_skopeo_out(registry: str, files: tuple[Path, Path]) -> None:
    """Acceptance: N half-sent requests held open (N = 5,000, or what RLIMIT_NOFILE allows both processes);
    a compliant ``skopeo inspect`` through the gateway still succeeds within 2 s, and every half-open
    connection is closed by the gateway at its request-receipt deadline (5 s here: long enough that skopeo runs
    while the whole flood is held, not while the gateway is closing it). Measured on the 2-core test machine
    under load: skopeo 0.24-0.72 s (0.05-0.22 s without the flood); closed 5.00-6.10 s after opening."""
    if shutil.which("skopeo") is None:
        pytest.skip("skopeo not installed")
    _push_image(registry, "plain/img", "1")
    soft = raise_nofile_limit()  # this process holds the client ends
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # the gateway raises its soft limit to the same hard one
    n = min(HALF_OPEN, soft - 512, connection_budget(ServerLimits(), hard) - 64)
    assert n >= 500, f"RLIMIT_NOFILE {soft} leaves room for only {n} half-open connections"
    with GatewayProcess(registry, files, "--header-timeout", str(DEADLINE)) as proc:
        _, baseline = _skopeo_inspect(proc.address, "plain/img:1")
        socks: list[tuple[socket.socket, float]] = []
        try:
            for i in range(n):
                s = proc.connect()
                s.sendall(b"GET /v2/plain/img/manifests/1 HTTP/1.1\r\nHost: x\r\nX-Half-Open: %d" % i)
                socks.append((s, time.monotonic()))
            opened = time.monotonic()
            accepted = proc.wait_open_fds(n)  # the flood is held by the gateway, not queued in the kernel
            done, elapsed = _skopeo_inspect(proc.address, "plain/img:1")
            rss = proc.peak_rss_kib()
            closes = _wait_closed(socks, socks[-1][1] + DEADLINE + 5.0)
        finally:
            for s, _ in socks:
                s.close()
    late = [c - t for (_, t), c in zip(socks, closes, strict=True) if c is not None]
    print(f"{n} half-open connections opened in {opened - socks[0][1]:.2f}s, held by the gateway after "
          f"{accepted - socks[0][1]:.2f}s; skopeo inspect {elapsed:.2f}s "
          f"(without them {baseline:.2f}s); closed after {min(late):.2f}-{max(late):.2f}s "
          f"(deadline {DEADLINE}s); gateway peak RSS {rss / 1024:.0f} MB")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert json.loads(done.stdout)["Architecture"] == "amd64"
    # the mechanism: wait_open_fds saw the gateway hold the flood, and skopeo was served beside it; its time is
    # only a backstop, against the same run's baseline
    assert elapsed < max(10.0, 5 * baseline)
    assert len(late) == n, f"{n - len(late)} half-open connections still open {DEADLINE + 5}s after the last opened"
    assert min(late) >= DEADLINE - 0.2  # not before the deadline...
    assert max(late) < DEADLINE + 3.0  # ...and promptly at it


def _wait_closed(socks: list[tuple[socket.socket, float]], until: float) -> list[float | None]:
    """When each socket saw the server close it (EOF or reset), or None if it did not by ``until``."""
    closes: list[float | None] = [None] * len(socks)
    sel = selectors.DefaultSelector()
    for i, (s, _) in enumerate(socks):
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
    left = len(socks)
    while left and time.monotonic() < until:
        for key, _ in sel.select(timeout=0.2):
            i = int(key.data)
            try:
                data = key.fileobj.recv(65536)  # type: ignore[union-attr]
            except BlockingIOError:
                continue
            except ConnectionResetError:
                data = b""
            if not data:
                closes[i] = time.monotonic()
                sel.unregister(key.fileobj)
                left -= 1
    sel.close()
    return closes


@pytest.fixture(scope="module")
def deadline_gw(registry: str, files: tuple[Path, Path]) -> Iterator[RunningGateway]:
    """A gateway whose manifest bodies must arrive within 2 s in all (the body idle timeout stays 1 s per read)."""
    policy, trust = files
    config = GatewayConfig(upstream=f"http://{registry}", policy=load_policy(policy), trust=load_trust(trust),
                           manifest_body_seconds=2.0)
    running = start_in_thread(config, limits=LIMITS)
    try:
        yield running
    finally:
        running.stop()


def _trickle(sock: socket.socket, data: bytes, interval: float, until: float) -> bytes:
    """Send ``data`` a byte every ``interval`` s (each byte inside the idle timeout) until the server answers,
    closes, or ``until``; whatever it answered."""
    for byte in data:
        if time.monotonic() > until:
            break
        try:
            sock.send(bytes([byte]))
        except OSError:
            break
        r, _, _ = select.select([sock], [], [], interval)
        if r:
            break
    out, _ = _read_until_closed(sock, 10)
    return out


def test_a_trickled_manifest_body_is_408_at_the_total_deadline(deadline_gw: RunningGateway) -> None:
    """A byte every 0.4 s never trips the 1 s idle timeout; the 2 s total deadline answers 408 and closes."""
    raw = build_manifest("application/vnd.example.thing", [])
    sock = _connect(deadline_gw.address)
    sock.sendall(b"PUT /v2/plain/x/manifests/slow HTTP/1.1\r\nHost: x\r\nContent-Type: " + MEDIA_MANIFEST.encode()
                 + b"\r\nContent-Length: " + str(len(raw)).encode() + b"\r\n\r\n")
    started = time.monotonic()
    out = _trickle(sock, raw, 0.4, started + 15)
    elapsed = time.monotonic() - started
    assert out.startswith(b"HTTP/1.1 408 "), out[:200]
    body = json.loads(out.split(b"\r\n\r\n", 1)[1])
    assert body["errors"][0]["detail"]["codes"] == ["body_timeout"]
    assert elapsed < 15.0  # a backstop: 408 at ~2 s, closed by the lingering close 2 s after (measured ~4 s)


def test_a_trickled_blob_upload_outlives_the_manifest_deadline(deadline_gw: RunningGateway) -> None:
    """Blob uploads may be large and slow: only the idle timeout applies, so one trickled for 3.2 s (past the
    2 s manifest deadline, each byte within the 1 s idle timeout) completes."""
    address = deadline_gw.address
    post = httpx.post(f"http://{address}/v2/plain/slowblob/blobs/uploads/")
    assert post.status_code == 202, post.text
    location = httpx.URL(f"http://{address}/v2/").join(post.headers["location"])
    data = b"0123456789"
    digest = sha256_digest(data)
    target = location.raw_path + (b"&" if b"?" in location.raw_path else b"?") + b"digest=" + digest.encode()
    sock = _connect(address)
    sock.sendall(b"PUT " + target + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                 b"Content-Length: " + str(len(data)).encode() + b"\r\nConnection: close\r\n\r\n")
    started = time.monotonic()
    out = _trickle(sock, data, 0.32, started + 15)
    assert time.monotonic() - started > 2.5
    assert out.startswith(b"HTTP/1.1 201 "), out[:300]
    assert httpx.head(f"http://{address}/v2/plain/slowblob/blobs/{digest}").status_code == 200
