# ruff: noqa
"""Hidden grader for py-0009 (canary acx-canary-0e3739afb2a6fda32e0a1d86).

One test per behaviour: visible_example, whole, fractional_input, fractional_output.
"""

import json

from _harness import call_many

FUNC = 'celsius_to_fahrenheit'
CASES = json.loads("{\"visible_example\": [[100]], \"whole\": [[0], [-40]], \"fractional_input\": [[37.5]], \"fractional_output\": [[1]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 212.0}], \"whole\": [{\"ok\": 32.0}, {\"ok\": -40.0}], \"fractional_input\": [{\"ok\": 99.5}], \"fractional_output\": [{\"ok\": 33.8}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_whole():
    _check("whole")


def test_fractional_input():
    _check("fractional_input")


def test_fractional_output():
    _check("fractional_output")
