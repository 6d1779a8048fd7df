# ruff: noqa
"""Hidden grader for py-0061 (canary acx-canary-4c17497d3f8ffa0a7934f35a).

One test per behaviour: visible_example, pairs, singles, empty, negatives.
"""

import json

from _harness import call_many

FUNC = 'compress_ranges'
CASES = json.loads("{\"visible_example\": [[[1, 2, 3, 5]]], \"pairs\": [[[7, 8]], [[1, 2, 4]]], \"singles\": [[[1, 3, 5]]], \"empty\": [[[]]], \"negatives\": [[[-3, -2, -1, 1]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"1-3,5\"}], \"pairs\": [{\"ok\": \"7-8\"}, {\"ok\": \"1-2,4\"}], \"singles\": [{\"ok\": \"1,3,5\"}], \"empty\": [{\"ok\": \"\"}], \"negatives\": [{\"ok\": \"-3--1,1\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_pairs():
    _check("pairs")


def test_singles():
    _check("singles")


def test_empty():
    _check("empty")


def test_negatives():
    _check("negatives")
