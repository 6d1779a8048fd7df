# ruff: noqa
"""Hidden grader for py-0040 (canary acx-canary-f0ade371ad068ac4e0174fb0).

One test per behaviour: visible_example, last, duplicates, middle, empty.
"""

import json

from _harness import call_many

FUNC = 'next_permutation'
CASES = json.loads("{\"visible_example\": [[[1, 2, 3]]], \"last\": [[[3, 2, 1]]], \"duplicates\": [[[1, 1, 5]], [[2, 2, 1]]], \"middle\": [[[1, 3, 2]]], \"empty\": [[[]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 3, 2]}], \"last\": [{\"ok\": [1, 2, 3]}], \"duplicates\": [{\"ok\": [1, 5, 1]}, {\"ok\": [1, 2, 2]}], \"middle\": [{\"ok\": [2, 1, 3]}], \"empty\": [{\"ok\": []}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_last():
    _check("last")


def test_duplicates():
    _check("duplicates")


def test_middle():
    _check("middle")


def test_empty():
    _check("empty")
