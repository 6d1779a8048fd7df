"""The ORAS CLI for the mirror interop tests: ``$ACX_ORAS``, ``oras`` on PATH, or a cached copy.

Debian bookworm does not package it; ``scripts/fetch-oras.sh`` unpacks trixie's ``oras`` .deb (a
static Go binary) into the cache without touching the system's apt sources. Fetched at most once
per cache directory; under ``CI=true`` a missing ORAS CLI fails instead of skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .env import ROOT, ci_enabled


def _cache_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "acx-oci" / "oras"


def oras_binary() -> str:
    """Path of a working ORAS CLI, fetching it into the cache once; skip (or fail under CI) if impossible."""
    env = os.environ.get("ACX_ORAS")
    candidates = [env] if env else []
    candidates += [shutil.which("oras") or "", str(_cache_dir() / "usr" / "bin" / "oras")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    script = ROOT / "scripts" / "fetch-oras.sh"
    proc = subprocess.run(["bash", str(script), str(_cache_dir())], capture_output=True, timeout=300)
    binary = _cache_dir() / "usr" / "bin" / "oras"
    if proc.returncode == 0 and os.access(binary, os.X_OK):
        return str(binary)
    reason = f"ORAS CLI unavailable ({proc.stderr.decode(errors='replace').strip()[-300:]})"
    if ci_enabled():
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def oras(binary: str, home: Path, *args: str) -> str:
    """Run ``oras ARGS`` with its own HOME (no user credentials or config); stdout, or fail with stderr."""
    proc = subprocess.run([binary, *args], capture_output=True, env={**os.environ, "HOME": str(home)}, timeout=300)
    assert proc.returncode == 0, f"oras {' '.join(args)}: {proc.stderr.decode(errors='replace')}"
    return proc.stdout.decode()
