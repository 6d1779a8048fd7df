# ruff: noqa
"""Hidden grader for py-0074 (canary acx-canary-fc64f778e77d14c5991d2bce).

One test per behaviour: visible_example, empty, negatives, floats.
"""

import json

from _harness import call_many

FUNC = 'sum_list'
CASES = json.loads("{\"visible_example\": [[[1, 2, 3]]], \"empty\": [[[]]], \"negatives\": [[[-1, -2, 5]]], \"floats\": [[[0.5, 0.25]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 6}], \"empty\": [{\"ok\": 0}], \"negatives\": [{\"ok\": 2}], \"floats\": [{\"ok\": 0.75}]}")


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
