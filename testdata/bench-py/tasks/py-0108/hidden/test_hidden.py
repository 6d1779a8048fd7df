# ruff: noqa
"""Hidden grader for py-0108 (canary acx-canary-cab5aff75e56ecbf977b76a1).

One test per behaviour: visible_example, empty, negatives, floats.
"""

import json

from _harness import call_many

FUNC = 'cumulative_sum'
CASES = json.loads("{\"visible_example\": [[[1, 2, 3]]], \"empty\": [[[]]], \"negatives\": [[[5, -5, 5]]], \"floats\": [[[0.5, 0.5]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 3, 6]}], \"empty\": [{\"ok\": []}], \"negatives\": [{\"ok\": [5, 0, 5]}], \"floats\": [{\"ok\": [0.5, 1.0]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_negatives():
    _check("negatives")


def test_floats():
    _check("floats")
