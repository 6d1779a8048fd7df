# ruff: noqa
"""Hidden grader for py-0094 (canary acx-canary-0467b7d2ed1f1dede271b3f3).

One test per behaviour: visible_example, zero, negative, trailing_zeros.
"""

import json

from _harness import call_many

FUNC = 'digits_of'
CASES = json.loads("{\"visible_example\": [[123]], \"zero\": [[0]], \"negative\": [[-45]], \"trailing_zeros\": [[1200]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 2, 3]}], \"zero\": [{\"ok\": [0]}], \"negative\": [{\"ok\": [4, 5]}], \"trailing_zeros\": [{\"ok\": [1, 2, 0, 0]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_zero():
    _check("zero")


def test_negative():
    _check("negative")


def test_trailing_zeros():
    _check("trailing_zeros")
