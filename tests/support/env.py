"""The switches the suite reads from the environment: CI mode, slow tests, conformance vectors.

* ``CI=true`` (what ``.ci/run`` exports): slow tests run, and a missing registry FAILS.
* ``ACX_SLOW=1`` or ``pytest --runslow``: slow tests run (developers; CI does not need it).
* ``ACX_VECTORS=DIR``: where the conformance vectors are (default ``tests/vectors``, in the repository, so a
  fresh clone runs every conformance test); a missing or empty directory FAILS, never skips.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_VECTORS = ROOT / "tests" / "vectors"
_TRUE = ("1", "true", "yes", "on")


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def ci_enabled() -> bool:
    """``CI`` is set to a true value (``.ci/run`` exports ``CI=true``; so do GitHub Actions and GitLab)."""
    return _truthy("CI")


def slow_enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("--runslow")) or ci_enabled() or _truthy("ACX_SLOW")


SLOW_SKIP_REASON = "slow (stress repeats, full certification, image builds): --runslow, ACX_SLOW=1 or CI=true"


#: Repeats of a stress test that CI runs (``slow``); the rest are ``stress``: ``ACX_STRESS=1`` runs them (the whole
#: suite's CI run must stay within 30 minutes on two cores).
CI_REPEATS = 3
STRESS_SKIP_REASON = "stress repeat beyond CI's: ACX_STRESS=1"


def stress_enabled() -> bool:
    """``ACX_STRESS=1``: every repeat of the stress tests (those beyond :data:`CI_REPEATS` too)."""
    return _truthy("ACX_STRESS")


def repeats(n: int) -> list[Any]:
    """``parametrize`` values ``0..n-1`` for a repeated stress test: repeat 0 always runs, the next ones are
    ``slow`` (CI), those from :data:`CI_REPEATS` on ``slow`` and ``stress`` (``ACX_STRESS=1``)."""
    return [0, *(pytest.param(r, marks=[pytest.mark.slow] + ([pytest.mark.stress] if r >= CI_REPEATS else []))
                 for r in range(1, n))]


def vectors_dir() -> Path:
    """``$ACX_VECTORS`` or ``tests/vectors``; fails (never skips) when it is missing or empty.

    The vectors ship with the tests, so their absence is a broken checkout, not an optional extra.
    """
    env = os.environ.get("ACX_VECTORS")
    p = Path(env) if env else DEFAULT_VECTORS
    if not p.is_dir() or not any(p.iterdir()):
        where = f"ACX_VECTORS={env} is set but is" if env else f"{p} is"
        pytest.fail(f"conformance vectors missing: {where} not a non-empty directory", pytrace=False)
    return p
