# ruff: noqa
"""Hidden grader for py-0114 (canary acx-canary-4f6d2c429832459742855b3c).

One test per behaviour: visible_example, invalid_repeat, bad_subtractive, valid, empty.
"""

import json

from _harness import call_many

FUNC = 'roman_valid'
CASES = json.loads("{\"visible_example\": [[\"XIV\"]], \"invalid_repeat\": [[\"IIII\"], [\"VV\"]], \"bad_subtractive\": [[\"IC\"], [\"XM\"]], \"valid\": [[\"MCMXCIV\"], [\"MMMCMXCIX\"]], \"empty\": [[\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"invalid_repeat\": [{\"ok\": false}, {\"ok\": false}], \"bad_subtractive\": [{\"ok\": false}, {\"ok\": false}], \"valid\": [{\"ok\": true}, {\"ok\": true}], \"empty\": [{\"ok\": false}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_invalid_repeat():
    _check("invalid_repeat")


def test_bad_subtractive():
    _check("bad_subtractive")


def test_valid():
    _check("valid")


def test_empty():
    _check("empty")
