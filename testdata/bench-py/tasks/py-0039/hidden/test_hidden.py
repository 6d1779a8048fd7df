# ruff: noqa
"""Hidden grader for py-0039 (canary acx-canary-8455c1071bf5b85bc7989d12).

One test per behaviour: visible_example, capacity_one, thrashing, recency.
"""

import json

from _harness import call_many

FUNC = 'lru_misses'
CASES = json.loads("{\"visible_example\": [[2, [1, 2, 1]]], \"capacity_one\": [[1, [1, 1, 2, 1]]], \"thrashing\": [[2, [1, 2, 3, 1, 2, 3]]], \"recency\": [[3, [1, 2, 3, 1, 4, 5, 2]], [3, [1, 2, 3, 1, 4, 1]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"capacity_one\": [{\"ok\": 3}], \"thrashing\": [{\"ok\": 6}], \"recency\": [{\"ok\": 6}, {\"ok\": 4}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_capacity_one():
    _check("capacity_one")


def test_thrashing():
    _check("thrashing")


def test_recency():
    _check("recency")
