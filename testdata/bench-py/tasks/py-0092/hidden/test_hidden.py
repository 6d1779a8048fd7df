# ruff: noqa
"""Hidden grader for py-0092 (canary acx-canary-2cc42c822b1548948e4f0dd9).

One test per behaviour: visible_example, zero, one, large.
"""

import json

from _harness import call_many

FUNC = 'sum_of_squares'
CASES = json.loads("{\"visible_example\": [[3]], \"zero\": [[0]], \"one\": [[1]], \"large\": [[1000]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 14}], \"zero\": [{\"ok\": 0}], \"one\": [{\"ok\": 1}], \"large\": [{\"ok\": 333833500}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_zero():
    _check("zero")


def test_one():
    _check("one")


def test_large():
    _check("large")
