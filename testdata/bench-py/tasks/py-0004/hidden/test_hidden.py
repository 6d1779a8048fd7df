# ruff: noqa
"""Hidden grader for py-0004 (canary acx-canary-d1af722a8690bb0d522711aa).

One test per behaviour: visible_example, empty, negatives, single.
"""

import json

from _harness import call_many

FUNC = 'max_of_list'
CASES = json.loads("{\"visible_example\": [[[1, 3, 2]]], \"empty\": [[[]]], \"negatives\": [[[-5, -2, -9]]], \"single\": [[[7]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"empty\": [{\"ok\": null}], \"negatives\": [{\"ok\": -2}], \"single\": [{\"ok\": 7}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_negatives():
    _check("negatives")


def test_single():
    _check("single")
