# ruff: noqa
"""Hidden grader for py-0101 (canary acx-canary-f94060bfb81509805e170c99).

One test per behaviour: visible_example, none, digits, unicode.
"""

import json

from _harness import call_many

FUNC = 'count_upper'
CASES = json.loads("{\"visible_example\": [[\"Hello World\"]], \"none\": [[\"abc\"]], \"digits\": [[\"A1B2\"]], \"unicode\": [[\"\\u00c4\\u00d6\\u00fc\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"none\": [{\"ok\": 0}], \"digits\": [{\"ok\": 2}], \"unicode\": [{\"ok\": 2}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_none():
    _check("none")


def test_digits():
    _check("digits")


def test_unicode():
    _check("unicode")
