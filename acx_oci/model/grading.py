"""How a level's exams were graded, as its credential says it (``acx:grading``, issue 46) (pure).

Each game record carries ``grading: {mode, tamperChecks[, relaxations]}`` (``acx_oci/sandbox/tamper.py``):
``in-process`` when the hidden tests import the submission into pytest's process (an imported exam), where
only the tamper checks stand between a submission and a forged pass. The credential sums them up, so that a
consumer's trust file can require the checks (its default for in-process grades) or refuse a relaxation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

IN_PROCESS = "in-process"
OUT_OF_PROCESS = "out-of-process"
#: The checks every in-process grade must have run (honeypots need a graded ``assert x == <constant>``).
REQUIRED_CHECKS = ("runnerIntegrity", "observer")
#: The package under test is one pytest itself imports (pluggy, iniconfig, packaging...): the submission is
#: part of the runner before any check is armed, so in-process detection cannot be sound there.
RUNNER_IMPORTS_PACKAGE = "runnerImportsPackageUnderTest"
#: Top-level modules the grader's pytest imports before the submission is on ``sys.path``.
RUNNER_PACKAGES = frozenset({"pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "exceptiongroup",
                             "tomli", "colorama", "attr", "attrs"})


def claim(predicates: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """``acx:grading`` from the game predicates: the modes seen, the checks every in-process game ran, the
    relaxations any game was graded under; None when no game says (a simulated level)."""
    modes: set[str] = set()
    checks: set[str] | None = None
    relaxed: set[str] = set()
    for pred in predicates:
        g = pred.get("grading")
        if not isinstance(g, dict):
            continue
        mode = str(g.get("mode"))
        modes.add(mode)
        relaxed.update(str(r) for r in g.get("relaxations") or ())
        if mode == IN_PROCESS:
            got = {str(c) for c in g.get("tamperChecks") or ()}
            checks = got if checks is None else checks & got
    if not modes:
        return None
    out: dict[str, Any] = {"modes": sorted(modes), "tamperChecks": sorted(checks or ())}
    if relaxed:
        out["relaxations"] = sorted(relaxed)
    return out


def missing_checks(grading: Any) -> list[str]:
    """The required tamper checks an in-process grading did not run (empty: none missing, or not in-process)."""
    if not isinstance(grading, dict) or IN_PROCESS not in (grading.get("modes") or ()):
        return []
    have = set(grading.get("tamperChecks") or ())
    return [c for c in REQUIRED_CHECKS if c not in have]


def relaxation_for(packages: Iterable[str]) -> list[str]:
    """The relaxation an exam is graded under when a package under test is one the runner imports itself."""
    return [RUNNER_IMPORTS_PACKAGE] if set(packages) & RUNNER_PACKAGES else []
