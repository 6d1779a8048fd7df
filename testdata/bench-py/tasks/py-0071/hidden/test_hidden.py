# ruff: noqa
"""Hidden grader for py-0071 (canary acx-canary-76d9b1011093099260481c61).

One test per behaviour: visible_example, zero, positive, negative_fraction.
"""

import json

from _harness import call_many

FUNC = 'sign'
CASES = json.loads("{\"visible_example\": [[-7]], \"zero\": [[0]], \"positive\": [[9], [0.5]], \"negative_fraction\": [[-0.25]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": -1}], \"zero\": [{\"ok\": 0}], \"positive\": [{\"ok\": 1}, {\"ok\": 1}], \"negative_fraction\": [{\"ok\": -1}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_zero():
    _check("zero")


def test_positive():
    _check("positive")


def test_negative_fraction():
    _check("negative_fraction")
