# ruff: noqa
"""Hidden grader for py-0075 (canary acx-canary-e4b4775ad9bd50e2f2ad3bab).

One test per behaviour: visible_example, single, negatives, sorted_input.
"""

import json

from _harness import call_many

FUNC = 'min_max'
CASES = json.loads("{\"visible_example\": [[[3, 1, 2]]], \"single\": [[[4]]], \"negatives\": [[[-3, -9, -1]]], \"sorted_input\": [[[1, 2, 3]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 3]}], \"single\": [{\"ok\": [4, 4]}], \"negatives\": [{\"ok\": [-9, -1]}], \"sorted_input\": [{\"ok\": [1, 3]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_single():
    _check("single")


def test_negatives():
    _check("negatives")


def test_sorted_input():
    _check("sorted_input")
