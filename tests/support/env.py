"""The switches the suite reads from the environment: CI mode, slow tests, conformance vectors.

* ``CI=true`` (what ``.ci/run`` exports): slow tests run, and missing vectors or registry FAIL.
* ``ACX_SLOW=1`` or ``pytest --runslow``: slow tests run (developers; CI does not need it).
* ``ACX_VECTORS=DIR``: where the conformance vectors are (default ``../shared/vectors``);
  when it is set, a missing directory FAILS instead of skipping.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_VECTORS = ROOT.parent / "shared" / "vectors"
_TRUE = ("1", "true", "yes", "on")


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def ci_enabled() -> bool:
    """``CI`` is set to a true value (``.ci/run`` exports ``CI=true``; so do GitHub Actions and GitLab)."""
    return _truthy("CI")


def slow_enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("--runslow")) or ci_enabled() or _truthy("ACX_SLOW")


SLOW_SKIP_REASON = "slow (stress repeats, full certification, image builds): --runslow, ACX_SLOW=1 or CI=true"


def repeats(n: int) -> list[Any]:
    """``parametrize`` values ``0..n-1`` for a repeated stress test: repeat 0 always runs, the rest are ``slow``."""
    return [0, *(pytest.param(r, marks=pytest.mark.slow) for r in range(1, n))]


def vectors_dir() -> Path:
    """The conformance vectors directory, or skip -- or fail, under ``CI=true`` or an explicit ``ACX_VECTORS``."""
    env = os.environ.get("ACX_VECTORS")
    if env:
        p = Path(env)
        if not p.is_dir() or not any(p.iterdir()):
            pytest.fail(f"conformance vectors missing: ACX_VECTORS={env} is set but is not a non-empty directory",
                        pytrace=False)
        return p
    if DEFAULT_VECTORS.is_dir() and any(DEFAULT_VECTORS.iterdir()):
        return DEFAULT_VECTORS
    if ci_enabled():
        pytest.fail(f"conformance vectors missing: {DEFAULT_VECTORS} does not exist or is empty and CI=true; "
                    "check out the shared vectors next to this repository or set ACX_VECTORS=DIR", pytrace=False)
    pytest.skip(f"conformance vectors not found at {DEFAULT_VECTORS} (set ACX_VECTORS=DIR; under CI=true this fails)")
