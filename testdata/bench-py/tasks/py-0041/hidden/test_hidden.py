# ruff: noqa
"""Hidden grader for py-0041 (canary acx-canary-5990c0705c8470c6f35f80e3).

One test per behaviour: visible_example, inside, below, above, floats.
"""

import json

from _harness import call_many

FUNC = 'clamp'
CASES = json.loads("{\"visible_example\": [[5, 0, 10]], \"inside\": [[3, 0, 10], [0, 0, 10]], \"below\": [[-5, 0, 10]], \"above\": [[15, 0, 10], [11, -3, 3]], \"floats\": [[2.5, 0, 10]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 5}], \"inside\": [{\"ok\": 3}, {\"ok\": 0}], \"below\": [{\"ok\": 0}], \"above\": [{\"ok\": 10}, {\"ok\": 3}], \"floats\": [{\"ok\": 2.5}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_inside():
    _check("inside")


def test_below():
    _check("below")


def test_above():
    _check("above")


def test_floats():
    _check("floats")
