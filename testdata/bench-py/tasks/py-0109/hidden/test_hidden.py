# ruff: noqa
"""Hidden grader for py-0109 (canary acx-canary-44b6dfb33c02ae1ce2c041a6).

One test per behaviour: visible_example, overlap, absent, whole.
"""

import json

from _harness import call_many

FUNC = 'count_substring'
CASES = json.loads("{\"visible_example\": [[\"banana\", \"ana\"]], \"overlap\": [[\"aaaa\", \"aa\"]], \"absent\": [[\"abc\", \"d\"]], \"whole\": [[\"abc\", \"abc\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"overlap\": [{\"ok\": 3}], \"absent\": [{\"ok\": 0}], \"whole\": [{\"ok\": 1}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_overlap():
    _check("overlap")


def test_absent():
    _check("absent")


def test_whole():
    _check("whole")
