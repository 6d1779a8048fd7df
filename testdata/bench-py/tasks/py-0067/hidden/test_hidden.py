# ruff: noqa
"""Hidden grader for py-0067 (canary acx-canary-75e6ac4a90ec9db55e5a8606).

One test per behaviour: visible_example, precedence, parentheses, left_associative, spaces.
"""

import json

from _harness import call_many

FUNC = 'eval_expr'
CASES = json.loads("{\"visible_example\": [[\"1 + 2\"]], \"precedence\": [[\"2 + 3 * 4\"], [\"10 - 2 * 3\"]], \"parentheses\": [[\"(1 + 2) * 3\"], [\"2 * (3 + 4) - 1\"]], \"left_associative\": [[\"10 - 3 - 2\"]], \"spaces\": [[\"  7*6 \"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"precedence\": [{\"ok\": 14}, {\"ok\": 4}], \"parentheses\": [{\"ok\": 9}, {\"ok\": 13}], \"left_associative\": [{\"ok\": 5}], \"spaces\": [{\"ok\": 42}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_precedence():
    _check("precedence")


def test_parentheses():
    _check("parentheses")


def test_left_associative():
    _check("left_associative")


def test_spaces():
    _check("spaces")
