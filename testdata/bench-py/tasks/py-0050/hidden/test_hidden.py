# ruff: noqa
"""Hidden grader for py-0050 (canary acx-canary-791f6399b99dc89fa991cae8).

One test per behaviour: visible_example, large_k, negative_k, empty.
"""

import json

from _harness import call_many

FUNC = 'rotate_list'
CASES = json.loads("{\"visible_example\": [[[1, 2, 3, 4], 1]], \"large_k\": [[[1, 2, 3], 5], [[1, 2, 3], 3]], \"negative_k\": [[[1, 2, 3], -1]], \"empty\": [[[], 2]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [4, 1, 2, 3]}], \"large_k\": [{\"ok\": [2, 3, 1]}, {\"ok\": [1, 2, 3]}], \"negative_k\": [{\"ok\": [2, 3, 1]}], \"empty\": [{\"ok\": []}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_large_k():
    _check("large_k")


def test_negative_k():
    _check("negative_k")


def test_empty():
    _check("empty")
