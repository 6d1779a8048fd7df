# ruff: noqa
"""Hidden grader for py-0144 (canary acx-canary-d760c50d50021c955eaf0839).

One test per behaviour: visible_example, even, empty, whole.
"""

import json

from _harness import call_many

FUNC = 'longest_palindrome_sub'
CASES = json.loads("{\"visible_example\": [[\"babad\"]], \"even\": [[\"cbbd\"]], \"empty\": [[\"\"]], \"whole\": [[\"racecar\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"even\": [{\"ok\": 2}], \"empty\": [{\"ok\": 0}], \"whole\": [{\"ok\": 7}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_even():
    _check("even")


def test_empty():
    _check("empty")


def test_whole():
    _check("whole")
