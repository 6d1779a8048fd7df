# ruff: noqa
"""Hidden grader for py-0130 (canary acx-canary-78247c26a5e902d4d8c3bb71).

One test per behaviour: visible_example, disjoint, empty, zero_sum.
"""

import json

from _harness import call_many

FUNC = 'merge_dicts_sum'
CASES = json.loads("{\"visible_example\": [[{\"x\": 1}, {\"x\": 2, \"y\": 3}]], \"disjoint\": [[{\"a\": 1}, {\"b\": 2}]], \"empty\": [[{}, {}]], \"zero_sum\": [[{\"a\": 1}, {\"a\": -1}]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": {\"x\": 3, \"y\": 3}}], \"disjoint\": [{\"ok\": {\"a\": 1, \"b\": 2}}], \"empty\": [{\"ok\": {}}], \"zero_sum\": [{\"ok\": {\"a\": 0}}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_disjoint():
    _check("disjoint")


def test_empty():
    _check("empty")


def test_zero_sum():
    _check("zero_sum")
