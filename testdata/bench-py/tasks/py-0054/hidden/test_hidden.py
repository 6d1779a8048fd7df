# ruff: noqa
"""Hidden grader for py-0054 (canary acx-canary-49171b9b77eefb4582ff369a).

One test per behaviour: visible_example, leading_capital, after_digit, consecutive_capitals, already_snake.
"""

import json

from _harness import call_many

FUNC = 'camel_to_snake'
CASES = json.loads("{\"visible_example\": [[\"helloWorld\"]], \"leading_capital\": [[\"HelloWorld\"]], \"after_digit\": [[\"version2Update\"]], \"consecutive_capitals\": [[\"getHTTP\"]], \"already_snake\": [[\"already_snake\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"hello_world\"}], \"leading_capital\": [{\"ok\": \"hello_world\"}], \"after_digit\": [{\"ok\": \"version2_update\"}], \"consecutive_capitals\": [{\"ok\": \"get_h_t_t_p\"}], \"already_snake\": [{\"ok\": \"already_snake\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_leading_capital():
    _check("leading_capital")


def test_after_digit():
    _check("after_digit")


def test_consecutive_capitals():
    _check("consecutive_capitals")


def test_already_snake():
    _check("already_snake")
