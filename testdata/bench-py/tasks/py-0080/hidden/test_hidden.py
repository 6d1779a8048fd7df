# ruff: noqa
"""Hidden grader for py-0080 (canary acx-canary-51d7afddf97fd4fda4480673).

One test per behaviour: visible_example, zeros, empty, floats.
"""

import json

from _harness import call_many

FUNC = 'count_positive'
CASES = json.loads("{\"visible_example\": [[[1, -2, 3]]], \"zeros\": [[[0, 0, 1]]], \"empty\": [[[]]], \"floats\": [[[0.1, -0.1]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"zeros\": [{\"ok\": 1}], \"empty\": [{\"ok\": 0}], \"floats\": [{\"ok\": 1}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_zeros():
    _check("zeros")


def test_empty():
    _check("empty")


def test_floats():
    _check("floats")
