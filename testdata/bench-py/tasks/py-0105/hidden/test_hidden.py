# ruff: noqa
"""Hidden grader for py-0105 (canary acx-canary-21dc2671ea8023f439cc0288).

One test per behaviour: visible_example, zero, power_of_two, all_ones.
"""

import json

from _harness import call_many

FUNC = 'bit_count'
CASES = json.loads("{\"visible_example\": [[5]], \"zero\": [[0]], \"power_of_two\": [[1024]], \"all_ones\": [[255]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"zero\": [{\"ok\": 0}], \"power_of_two\": [{\"ok\": 1}], \"all_ones\": [{\"ok\": 8}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_zero():
    _check("zero")


def test_power_of_two():
    _check("power_of_two")


def test_all_ones():
    _check("all_ones")
