# ruff: noqa
"""Hidden grader for py-0034 (canary acx-canary-3fbd539a78a9204371edd626).

One test per behaviour: visible_example, empty, mixed, too_heavy, no_reuse.
"""

import json

from _harness import call_many

FUNC = 'knapsack'
CASES = json.loads("{\"visible_example\": [[[1, 2], [10, 15], 2]], \"empty\": [[[], [], 5]], \"mixed\": [[[1, 3, 4, 5], [1, 4, 5, 7], 7]], \"too_heavy\": [[[5], [10], 4]], \"no_reuse\": [[[2], [3], 4]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 15}], \"empty\": [{\"ok\": 0}], \"mixed\": [{\"ok\": 9}], \"too_heavy\": [{\"ok\": 0}], \"no_reuse\": [{\"ok\": 3}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_mixed():
    _check("mixed")


def test_too_heavy():
    _check("too_heavy")


def test_no_reuse():
    _check("no_reuse")
