"""The walk-through (docs/getting-started.md) runs top to bottom as one script, against a real registry of its own.

The ```sh blocks under "## Walk-through" (up to the next "## " heading) are joined in order and run by
``bash -euo pipefail`` in an empty folder, with ``acx-oci`` on PATH (this checkout), ``$REG`` the test
registry and ``$GW`` a free port for the gateway. An edit of the page that breaks a step fails here.
Needs ``jq`` and ``curl`` (scripts/test.sh installs them).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .support.env import ROOT, ci_enabled
from .support.registry import Registry

WALKTHROUGH = ROOT / "docs" / "getting-started.md"


def walkthrough_script(page: str) -> str:
    start = page.index("\n## Walk-through\n")
    end = page.find("\n## ", start + 1)
    section = page[start:end if end != -1 else None]
    blocks = re.findall(r"^```sh\n(.*?)^```$", section, flags=re.S | re.M)
    assert len(blocks) >= 5, "the walk-through lost its ```sh blocks"
    return "\n".join(blocks)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow  # ~70 s wall on a loaded 2-core machine (19 s CPU: mostly 25 CLI start-ups); CI runs slow tests
def test_readme_walkthrough_runs_top_to_bottom(own_registry: Registry, tmp_path: Path) -> None:
    missing = [tool for tool in ("bash", "jq", "curl") if shutil.which(tool) is None]
    if missing:
        if ci_enabled():
            raise RuntimeError(f"{missing} not installed; scripts/test.sh installs them")
        pytest.skip(f"{missing} not installed")
    script = walkthrough_script(WALKTHROUGH.read_text("utf-8"))
    assert "localhost:5000" in script and "$REG" in script  # readers get a default, CI its own registry
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "acx-oci"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m acx_oci "$@"\n')
    wrapper.chmod(0o755)
    work = tmp_path / "walk"
    work.mkdir()
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT), "REG": own_registry.host, "GW": f"127.0.0.1:{_free_port()}"}
    proc = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=240)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)  # the walk-through's own process group (a stray gateway)
    assert proc.returncode == 0, f"exit {proc.returncode}\n--- stdout\n{out[-3000:]}\n--- stderr\n{err[-3000:]}"
    # the key outputs, in the order the page promises them
    expected = [
        "verified=false",                                            # inspect: a claim, not yet proven
        "ISSUED",                                                    # attest
        "SIMULATED tier=",                            # resolve --require
        "pulled io.github.acme/dag-agent@1.0.0",                     # pull --require
        "VERIFIED agent card signed by did:key:",                    # agent-card verify --trust
        "ALLOWED",                                                   # policy check
        "pulled io.github.acme/dag-agent@1.0.0",                     # through the gateway
        "REVOKED",                                                   # revoke
        "REQUIREMENT NOT MET build-dag>=senior",                     # resolve after the revocation ...
        "refused (exit 1)",                                          # ... exits 1
    ]
    at = 0
    for text in expected:
        found = out.find(text, at)
        assert found != -1, f"{text!r} missing (after offset {at}):\n{out[-3000:]}"
        at = found + len(text)
    assert "revoked" in out.split("REQUIREMENT NOT MET", 1)[1].splitlines()[0]
    assert (work / "site" / ".well-known" / "agent-card.json").is_file()
    assert (work / "via-gateway" / "verified-capabilities.json").is_file()
    assert "repositories no rule covers: allow (set in the policy)" in err  # the gateway printed its default
