# ruff: noqa
"""Hidden grader for py-0036 (canary acx-canary-6a812ea42b8d57484a456703).

One test per behaviour: visible_example, impossible, zero, greedy_trap.
"""

import json

from _harness import call_many

FUNC = 'min_coins'
CASES = json.loads("{\"visible_example\": [[[1, 2, 5], 11]], \"impossible\": [[[2], 3]], \"zero\": [[[1], 0]], \"greedy_trap\": [[[186, 419, 83, 408], 6249], [[1, 3, 4], 6]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"impossible\": [{\"ok\": -1}], \"zero\": [{\"ok\": 0}], \"greedy_trap\": [{\"ok\": 20}, {\"ok\": 2}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_impossible():
    _check("impossible")


def test_zero():
    _check("zero")


def test_greedy_trap():
    _check("greedy_trap")
