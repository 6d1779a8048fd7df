# ruff: noqa
"""Hidden grader for py-0008 (canary acx-canary-4ca4474db08e386170a091ff).

One test per behaviour: visible_example, zero, negative, large.
"""

import json

from _harness import call_many

FUNC = 'sum_digits'
CASES = json.loads("{\"visible_example\": [[123]], \"zero\": [[0]], \"negative\": [[-907]], \"large\": [[99999]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 6}], \"zero\": [{\"ok\": 0}], \"negative\": [{\"ok\": 16}], \"large\": [{\"ok\": 45}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_zero():
    _check("zero")


def test_negative():
    _check("negative")


def test_large():
    _check("large")
