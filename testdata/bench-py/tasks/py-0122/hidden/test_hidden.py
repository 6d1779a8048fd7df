# ruff: noqa
"""Hidden grader for py-0122 (canary acx-canary-27037f76f63cf5a372c844c4).

One test per behaviour: visible_example, z, two_letters, three_letters.
"""

import json

from _harness import call_many

FUNC = 'excel_number'
CASES = json.loads("{\"visible_example\": [[\"A\"]], \"z\": [[\"Z\"]], \"two_letters\": [[\"AA\"], [\"AZ\"]], \"three_letters\": [[\"ZZZ\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 1}], \"z\": [{\"ok\": 26}], \"two_letters\": [{\"ok\": 27}, {\"ok\": 52}], \"three_letters\": [{\"ok\": 18278}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_z():
    _check("z")


def test_two_letters():
    _check("two_letters")


def test_three_letters():
    _check("three_letters")
