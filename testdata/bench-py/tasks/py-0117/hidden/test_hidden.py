# ruff: noqa
"""Hidden grader for py-0117 (canary acx-canary-cc91ddf13f0372d87e0cdd5a).

One test per behaviour: visible_example, small, overlap, large.
"""

import json

from _harness import call_many

FUNC = 'sum_multiples'
CASES = json.loads("{\"visible_example\": [[10]], \"small\": [[1], [4]], \"overlap\": [[16]], \"large\": [[1000]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 23}], \"small\": [{\"ok\": 0}, {\"ok\": 3}], \"overlap\": [{\"ok\": 60}], \"large\": [{\"ok\": 233168}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_small():
    _check("small")


def test_overlap():
    _check("overlap")


def test_large():
    _check("large")
