"""Attacks on the gateway that its first hardening missed (issue 14, items 1-2): each test is one attack."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import h11
import httpx
import pytest

from acx_oci.evaluation.policy import load_policy
from acx_oci.gateway import GatewayConfig, RunningGateway, start_in_thread
from acx_oci.gateway.limits import ServerLimits
from acx_oci.gateway.proxy import DENIED_HEADER, denied
from acx_oci.trust.trustfile import load_trust

from .support.gateway_proc import minimal_policy_files


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
