# ruff: noqa
"""Hidden grader for py-0003 (canary acx-canary-1499b69a4b8c794722b3f8d8).

One test per behaviour: visible_example, empty, single, punctuation, whitespace.
"""

import json

from _harness import call_many

FUNC = 'reverse_string'
CASES = json.loads("{\"visible_example\": [[\"abc\"]], \"empty\": [[\"\"]], \"single\": [[\"a\"]], \"punctuation\": [[\"racecar!\"]], \"whitespace\": [[\" ab\"], [\"x y \"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"cba\"}], \"empty\": [{\"ok\": \"\"}], \"single\": [{\"ok\": \"a\"}], \"punctuation\": [{\"ok\": \"!racecar\"}], \"whitespace\": [{\"ok\": \"ba \"}, {\"ok\": \" y x\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_single():
    _check("single")


def test_punctuation():
    _check("punctuation")


def test_whitespace():
    _check("whitespace")
