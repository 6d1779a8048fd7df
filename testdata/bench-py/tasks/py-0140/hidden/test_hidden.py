# ruff: noqa
"""Hidden grader for py-0140 (canary acx-canary-6a5c1c96d6661129964c7135).

One test per behaviour: visible_example, empty, valley, slope, uneven.
"""

import json

from _harness import call_many

FUNC = 'trap_water'
CASES = json.loads("{\"visible_example\": [[[0, 1, 0, 2, 1, 0, 1, 3, 2, 1, 2, 1]]], \"empty\": [[[]]], \"valley\": [[[3, 0, 3]]], \"slope\": [[[1, 2, 3]]], \"uneven\": [[[4, 2, 0, 3, 2, 5]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 6}], \"empty\": [{\"ok\": 0}], \"valley\": [{\"ok\": 3}], \"slope\": [{\"ok\": 0}], \"uneven\": [{\"ok\": 9}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_valley():
    _check("valley")


def test_slope():
    _check("slope")


def test_uneven():
    _check("uneven")
