# ruff: noqa
"""Hidden grader for py-0069 (canary acx-canary-69dbb9204899a19df78eeb61).

One test per behaviour: visible_example, zero, negative, fractional.
"""

import json

from _harness import call_many

FUNC = 'square'
CASES = json.loads("{\"visible_example\": [[3]], \"zero\": [[0]], \"negative\": [[-4]], \"fractional\": [[1.5]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 9}], \"zero\": [{\"ok\": 0}], \"negative\": [{\"ok\": 16}], \"fractional\": [{\"ok\": 2.25}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_zero():
    _check("zero")


def test_negative():
    _check("negative")


def test_fractional():
    _check("fractional")
