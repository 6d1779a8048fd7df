# ruff: noqa
"""Hidden grader for py-0128 (canary acx-canary-2495aeb437e57f954d52e6b9).

One test per behaviour: visible_example, none, late, case.
"""

import json

from _harness import call_many

FUNC = 'first_unique_char'
CASES = json.loads("{\"visible_example\": [[\"leetcode\"]], \"none\": [[\"aabb\"], [\"\"]], \"late\": [[\"aabbc\"]], \"case\": [[\"aA\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 0}], \"none\": [{\"ok\": -1}, {\"ok\": -1}], \"late\": [{\"ok\": 4}], \"case\": [{\"ok\": 0}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_none():
    _check("none")


def test_late():
    _check("late")


def test_case():
    _check("case")
