# ruff: noqa
"""Hidden grader for py-0086 (canary acx-canary-e7e3168138864f5fe8680c59).

One test per behaviour: visible_example, empty, spaces, case.
"""

import json

from _harness import call_many

FUNC = 'char_frequency'
CASES = json.loads("{\"visible_example\": [[\"aab\"]], \"empty\": [[\"\"]], \"spaces\": [[\"a a\"]], \"case\": [[\"aA\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": {\"a\": 2, \"b\": 1}}], \"empty\": [{\"ok\": {}}], \"spaces\": [{\"ok\": {\"a\": 2, \" \": 1}}], \"case\": [{\"ok\": {\"a\": 1, \"A\": 1}}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_spaces():
    _check("spaces")


def test_case():
    _check("case")
