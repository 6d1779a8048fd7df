"""The real sigsum-witness (Debian trixie's sigsum-go 0.11.2) on loopback, for the tlog-witness interop tests.

The binary is ``$ACX_SIGSUM_WITNESS`` (scripts/test.sh exports it from scripts/install-sigsum-witness.sh),
else the cached copy, else the script is run once. Missing → skip, or fail under ``CI=true``.
It witnesses one log, whose key it reads in OpenSSH format; its own key is an unencrypted OpenSSH
private key; it needs ``GODEBUG=httpmuxgo121=0`` (else every route is 404).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from .env import ROOT, ci_enabled


def witness_binary() -> str:
    """Path of a working sigsum-witness, installing it into the cache once; skip (or fail under CI) if impossible."""
    env = os.environ.get("ACX_SIGSUM_WITNESS")
    if env and os.access(env, os.X_OK):
        return env
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "install-sigsum-witness.sh")], capture_output=True,
                          timeout=300)
    path = proc.stdout.decode().strip().splitlines()[-1:] if proc.returncode == 0 else []
    if path and os.access(path[0], os.X_OK):
        return path[0]
    reason = f"sigsum-witness unavailable ({proc.stderr.decode(errors='replace').strip()[-300:]})"
    if ci_enabled():
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@dataclass
class RunningWitness:
    """A started witness: its URL prefix and its Ed25519 key (tests derive the cosigner from it)."""

    url: str
    key: Ed25519PrivateKey
    proc: subprocess.Popen[bytes]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def sigsum_witness(tmp: Path, log_key: Ed25519PrivateKey) -> Iterator[RunningWitness]:
    """Start sigsum-witness for ``log_key``'s log on a free loopback port; stop it (by its pid) afterwards."""
    binary = witness_binary()
    key = Ed25519PrivateKey.generate()
    (tmp / "witness.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                                        serialization.NoEncryption()))
    (tmp / "witness.key").chmod(0o600)
    (tmp / "log.pub").write_bytes(log_key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                                                    serialization.PublicFormat.OpenSSH))
    env = {**os.environ, "GODEBUG": "httpmuxgo121=0"}
    for _ in range(3):  # the port is free when chosen; another process may take it before the witness binds
        port = _free_port()
        proc = subprocess.Popen([binary, "-k", str(tmp / "witness.key"), "--log-key", str(tmp / "log.pub"),
                                 "--state-file", str(tmp / "witness.state"), f"127.0.0.1:{port}"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        end = time.monotonic() + 10
        while time.monotonic() < end and proc.poll() is None and not _listening(port):
            time.sleep(0.05)
        if proc.poll() is None and _listening(port):
            break
        proc.kill()
        proc.wait()
    else:
        err = proc.stderr.read().decode(errors="replace")[-300:] if proc.stderr else ""
        pytest.fail(f"sigsum-witness did not start: {err}", pytrace=False)
    try:
        yield RunningWitness(f"http://127.0.0.1:{port}", key, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
