# ruff: noqa
"""Hidden grader for py-0089 (canary acx-canary-0179dd56c4c6608742cf5a77).

One test per behaviour: visible_example, empty, coprime, with_zero.
"""

import json

from _harness import call_many

FUNC = 'gcd_list'
CASES = json.loads("{\"visible_example\": [[[12, 18, 24]]], \"empty\": [[[]]], \"coprime\": [[[7, 9]]], \"with_zero\": [[[0, 6]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 6}], \"empty\": [{\"ok\": 0}], \"coprime\": [{\"ok\": 1}], \"with_zero\": [{\"ok\": 6}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_coprime():
    _check("coprime")


def test_with_zero():
    _check("with_zero")
