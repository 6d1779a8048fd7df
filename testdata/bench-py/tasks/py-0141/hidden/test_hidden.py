# ruff: noqa
"""Hidden grader for py-0141 (canary acx-canary-8452d283312f38bb2e87cab6).

One test per behaviour: visible_example, disjoint, nested, empty, touching.
"""

import json

from _harness import call_many

FUNC = 'interval_cover'
CASES = json.loads("{\"visible_example\": [[[[1, 3], [2, 5]]]], \"disjoint\": [[[[0, 1], [5, 7]]]], \"nested\": [[[[0, 10], [2, 3]]]], \"empty\": [[[]]], \"touching\": [[[[0, 2], [2, 4]]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 4}], \"disjoint\": [{\"ok\": 3}], \"nested\": [{\"ok\": 10}], \"empty\": [{\"ok\": 0}], \"touching\": [{\"ok\": 4}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_disjoint():
    _check("disjoint")


def test_nested():
    _check("nested")


def test_empty():
    _check("empty")


def test_touching():
    _check("touching")
