"""The real cosign for the cosign interop tests: Debian trixie's cosign 2.5 and Debian sid's cosign 3.

The binaries are ``$ACX_COSIGN`` and ``$ACX_COSIGN3`` (scripts/test.sh exports them from
scripts/install-cosign.sh and scripts/install-cosign3.sh), else the script is run once (it caches).
Missing → skip, or fail under ``CI=true``.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from .env import ROOT, ci_enabled


def _binary(env_var: str, script: str) -> str:
    env = os.environ.get(env_var)
    if env and os.access(env, os.X_OK):
        return env
    proc = subprocess.run(["bash", str(ROOT / "scripts" / script)], capture_output=True, timeout=300)
    path = proc.stdout.decode().strip().splitlines()[-1:] if proc.returncode == 0 else []
    if path and os.access(path[0], os.X_OK):
        os.environ[env_var] = path[0]
        return path[0]
    reason = f"{env_var} unavailable ({proc.stderr.decode(errors='replace').strip()[-300:]})"
    if ci_enabled():
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def cosign_binary() -> str:
    """Path of a working cosign 2.5, installing it into the cache once; skip (or fail under CI) if impossible."""
    return _binary("ACX_COSIGN", "install-cosign.sh")


def cosign3_binary() -> str:
    """Path of a working cosign 3, installing it into the cache once; skip (or fail under CI) if impossible."""
    return _binary("ACX_COSIGN3", "install-cosign3.sh")


_OFFLINE = {"SIGSTORE_NO_CACHE": "1", "TUF_ROOT": "/nonexistent-acx-tuf"}


def cosign(*args: str) -> subprocess.CompletedProcess[str]:
    """Run cosign 2.5 offline: no transparency log, no TUF root, plain HTTP to the loopback registry."""
    return subprocess.run([cosign_binary(), *args, "--insecure-ignore-tlog", "--allow-http-registry",
                           "--allow-insecure-registry"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **_OFFLINE})


def cosign3(*args: str) -> subprocess.CompletedProcess[str]:
    """Run cosign 3 with exactly ``args`` (offline: no TUF root is reachable or cached)."""
    return subprocess.run([cosign3_binary(), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **_OFFLINE})
