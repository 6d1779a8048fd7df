"""The real cosign (Debian trixie's cosign 2.5) for the cosign interop tests.

The binary is ``$ACX_COSIGN`` (scripts/test.sh exports it from scripts/install-cosign.sh), else the
script is run once (it caches). Missing → skip, or fail under ``CI=true``.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from .env import ROOT, ci_enabled


def cosign_binary() -> str:
    """Path of a working cosign, installing it into the cache once; skip (or fail under CI) if impossible."""
    env = os.environ.get("ACX_COSIGN")
    if env and os.access(env, os.X_OK):
        return env
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "install-cosign.sh")], capture_output=True, timeout=300)
    path = proc.stdout.decode().strip().splitlines()[-1:] if proc.returncode == 0 else []
    if path and os.access(path[0], os.X_OK):
        return path[0]
    reason = f"cosign unavailable ({proc.stderr.decode(errors='replace').strip()[-300:]})"
    if ci_enabled():
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def cosign(*args: str) -> subprocess.CompletedProcess[str]:
    """Run cosign offline: no transparency log, no TUF root, plain HTTP to the loopback registry."""
    env = {**os.environ, "SIGSTORE_NO_CACHE": "1", "TUF_ROOT": "/nonexistent-acx-tuf"}
    return subprocess.run([cosign_binary(), *args, "--insecure-ignore-tlog", "--allow-http-registry",
                           "--allow-insecure-registry"], capture_output=True, text=True, timeout=120, env=env)
