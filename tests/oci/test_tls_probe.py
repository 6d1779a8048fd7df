"""acx_oci.net.tls: the probe that names a TLS listener only by a TLS record, and docker's certs.d lookup."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from acx_oci.net import speaks_tls, split_host_port, verify_setting
from acx_oci.net.tls import certs_d_ca


def _one_answer(answer: bytes) -> tuple[socket.socket, threading.Thread]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def serve() -> None:
        conn, _ = srv.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(answer)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return srv, t


def test_a_plain_http_server_is_not_taken_for_tls() -> None:
    srv, t = _one_answer(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    with srv:
        assert not speaks_tls("127.0.0.1", srv.getsockname()[1])
        t.join(5)


def test_a_tls_alert_is_tls() -> None:
    srv, t = _one_answer(bytes([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]))  # fatal handshake_failure
    with srv:
        assert speaks_tls("127.0.0.1", srv.getsockname()[1])
        t.join(5)


def test_nothing_listening_is_not_tls() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert not speaks_tls("127.0.0.1", port)


def test_certs_d_is_docker_s_layout_and_insecure_beats_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACX_CERTS_D", str(tmp_path))
    (tmp_path / "127.0.0.1:5443").mkdir()
    (tmp_path / "127.0.0.1:5443" / "ca.crt").write_text("pem")
    assert certs_d_ca("127.0.0.1:5443") == str(tmp_path / "127.0.0.1:5443" / "ca.crt")
    assert certs_d_ca("127.0.0.1:5444") is None and certs_d_ca("..") is None
    assert verify_setting("127.0.0.1:5443", insecure=False, ca_file=None) == str(tmp_path / "127.0.0.1:5443/ca.crt")
    assert verify_setting("127.0.0.1:5443", insecure=False, ca_file="/x.pem") == "/x.pem"
    assert verify_setting("127.0.0.1:5443", insecure=True, ca_file="/x.pem") is False
    assert split_host_port("[::1]:5000", 80) == ("::1", 5000) and split_host_port("reg.example", 443) == (
        "reg.example", 443)
