# ruff: noqa
"""Hidden grader for py-0070 (canary acx-canary-70c84e629c9061578859d153).

One test per behaviour: visible_example, positive, zero, fractional.
"""

import json

from _harness import call_many

FUNC = 'absolute'
CASES = json.loads("{\"visible_example\": [[-3]], \"positive\": [[5]], \"zero\": [[0]], \"fractional\": [[-2.5]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"positive\": [{\"ok\": 5}], \"zero\": [{\"ok\": 0}], \"fractional\": [{\"ok\": 2.5}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_positive():
    _check("positive")


def test_zero():
    _check("zero")


def test_fractional():
    _check("fractional")
