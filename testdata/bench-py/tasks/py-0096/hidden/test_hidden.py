# ruff: noqa
"""Hidden grader for py-0096 (canary acx-canary-8f164b330f6cba93b793bc61).

One test per behaviour: visible_example, empty, negatives, decreasing.
"""

import json

from _harness import call_many

FUNC = 'running_max'
CASES = json.loads("{\"visible_example\": [[[1, 3, 2]]], \"empty\": [[[]]], \"negatives\": [[[-5, -7, -1]]], \"decreasing\": [[[3, 2, 1]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 3, 3]}], \"empty\": [{\"ok\": []}], \"negatives\": [{\"ok\": [-5, -5, -1]}], \"decreasing\": [{\"ok\": [3, 3, 3]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_negatives():
    _check("negatives")


def test_decreasing():
    _check("decreasing")
