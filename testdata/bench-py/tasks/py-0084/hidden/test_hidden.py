# ruff: noqa
"""Hidden grader for py-0084 (canary acx-canary-504e9826b7a1f097a141da75).

One test per behaviour: visible_example, empty, zero, negative.
"""

import json

from _harness import call_many

FUNC = 'product'
CASES = json.loads("{\"visible_example\": [[[2, 3, 4]]], \"empty\": [[[]]], \"zero\": [[[5, 0, 2]]], \"negative\": [[[-2, 3]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 24}], \"empty\": [{\"ok\": 1}], \"zero\": [{\"ok\": 0}], \"negative\": [{\"ok\": -6}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_zero():
    _check("zero")


def test_negative():
    _check("negative")
