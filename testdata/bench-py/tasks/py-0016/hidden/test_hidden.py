# ruff: noqa
"""Hidden grader for py-0016 (canary acx-canary-20c7585c6c309c05747fcd2e).

One test per behaviour: visible_example, additive, subtractive, mixed.
"""

import json

from _harness import call_many

FUNC = 'roman_to_int'
CASES = json.loads("{\"visible_example\": [[\"XIV\"]], \"additive\": [[\"MMXXVI\"], [\"VIII\"]], \"subtractive\": [[\"IV\"], [\"IX\"]], \"mixed\": [[\"MCMXCIV\"], [\"XLIX\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 14}], \"additive\": [{\"ok\": 2026}, {\"ok\": 8}], \"subtractive\": [{\"ok\": 4}, {\"ok\": 9}], \"mixed\": [{\"ok\": 1994}, {\"ok\": 49}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_additive():
    _check("additive")


def test_subtractive():
    _check("subtractive")


def test_mixed():
    _check("mixed")
