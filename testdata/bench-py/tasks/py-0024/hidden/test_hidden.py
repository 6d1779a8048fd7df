# ruff: noqa
"""Hidden grader for py-0024 (canary acx-canary-eb6a8d758505a5a4cc5f7b6c).

One test per behaviour: visible_example, all_same, empty, duplicate_top, negatives.
"""

import json

from _harness import call_many

FUNC = 'second_largest'
CASES = json.loads("{\"visible_example\": [[[1, 2, 3]]], \"all_same\": [[[5, 5, 5]]], \"empty\": [[[]]], \"duplicate_top\": [[[4, 4, 3, 1]]], \"negatives\": [[[-1, -2]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"all_same\": [{\"ok\": null}], \"empty\": [{\"ok\": null}], \"duplicate_top\": [{\"ok\": 3}], \"negatives\": [{\"ok\": -2}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_all_same():
    _check("all_same")


def test_empty():
    _check("empty")


def test_duplicate_top():
    _check("duplicate_top")


def test_negatives():
    _check("negatives")
