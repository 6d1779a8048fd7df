"""Where a failing hidden test failed, read from pytest's junit report (pure).

Two wrong submissions that fail the same tests can still fail for different reasons: a different assertion
of one test, or a different exception. Certification asks the two plausible probes to fail for different reasons;
where the hidden tests are a single test, the place of the failure is the next-best evidence of that.
"""

from __future__ import annotations

import re

#: A traceback entry's place in pytest's long report: ``tests/test_x.py:12: AssertionError`` (the last one
#: names the exception), relative to the grader's rootdir for a hidden test.
_ROOT = "/acx-grader/"  # the grader's rootdir, /tmp/acx-grader (sandbox.grader)
_PLACE = re.compile(r"^(\S[^\n:]*\.py):(\d+): ?([A-Za-z_][\w.]*)?\s*$", re.M)


def failed_at(text: str) -> str:
    """``tests/test_x.py:12 AssertionError``: the last line of a hidden test (under ``tests/``) the failure's
    traceback passes and the exception it ends with; two failures of one test differ in it when they fail
    different assertions (or raise different errors), the next-best reason after different failing tests."""
    places = _PLACE.findall(text[-65536:])
    if not places:
        return ""
    # the grader deletes the hidden files once collected: pytest then names them by their absolute path
    ours = [f"{p.split(_ROOT, 1)[-1]}:{n}" for p, n, _ in places if p.startswith("tests/") or _ROOT + "tests/" in p]
    return f"{ours[-1] if ours else ''} {places[-1][2]}".strip()
