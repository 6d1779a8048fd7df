# ruff: noqa
"""Hidden grader for py-0120 (canary acx-canary-271a29ffc45fa491a72ed25a).

One test per behaviour: visible_example, exact, tie_free, large.
"""

import json

from _harness import call_many

FUNC = 'nearest_square'
CASES = json.loads("{\"visible_example\": [[10]], \"exact\": [[16], [0]], \"tie_free\": [[13], [14]], \"large\": [[1000000000003]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 9}], \"exact\": [{\"ok\": 16}, {\"ok\": 0}], \"tie_free\": [{\"ok\": 16}, {\"ok\": 16}], \"large\": [{\"ok\": 1000000000000}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_exact():
    _check("exact")


def test_tie_free():
    _check("tie_free")


def test_large():
    _check("large")
