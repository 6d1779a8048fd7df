# ruff: noqa
"""Hidden grader for family-retired (canary acx-canary-7b45df3e4cce1db28ba126f4).

One test per behaviour: visible_example, zero, negative, large, floats.
"""

import json

from _harness import call_many

FUNC = 'add'
CASES = json.loads("{\"visible_example\": [[1, 2]], \"zero\": [[0, 0]], \"negative\": [[-5, 3], [-2, -2]], \"large\": [[1000000000000, 1]], \"floats\": [[0.5, 0.25]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"zero\": [{\"ok\": 0}], \"negative\": [{\"ok\": -2}, {\"ok\": -4}], \"large\": [{\"ok\": 1000000000001}], \"floats\": [{\"ok\": 0.75}]}")


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


def test_floats():
    _check("floats")
