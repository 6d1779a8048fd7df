"""What a shell user sees at the edges: a reader that stops early (``| head -1``) and a gateway whose port is taken."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .support.cli import cli_expect as cli
from .support.gateway_proc import minimal_policy_files


@pytest.mark.parametrize("extra", [(), ("--json",)])
def test_a_reader_that_went_away_ends_the_command_quietly(tmp_path: Path, extra: tuple[str, ...]) -> None:
    """``acx-oci … | head -1``: no ``error: Broken pipe``, no traceback; the status git's shell shows (141)."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first write: every write to stdout is EPIPE
    try:
        res = subprocess.run([sys.executable, "-m", "acx_oci", "keygen", str(tmp_path / "k"), *extra],
                             stdout=write, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write)
    assert res.returncode == 141, res.stderr
    assert res.stderr == b""
    assert (tmp_path / "k.key").is_file()  # the work was done; only its report had nowhere to go


def test_the_gateway_fails_before_its_banner_when_the_port_is_taken(tmp_path: Path) -> None:
    policy, trust = minimal_policy_files(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        listen = f"127.0.0.1:{taken.getsockname()[1]}"
        res = cli("gateway", "--upstream", "http://127.0.0.1:9", "--listen", listen, "--policy", policy,
                  "--trust", trust, ok=(3,))
    assert res.output.strip().splitlines() == [f"error: gateway: cannot listen on {listen}: Address already in use"]
