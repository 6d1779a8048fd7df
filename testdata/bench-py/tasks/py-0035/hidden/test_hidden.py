# ruff: noqa
"""Hidden grader for py-0035 (canary acx-canary-4253a8caa15c8d3766f52f20).

One test per behaviour: visible_example, no_split, empty, needs_backtracking.
"""

import json

from _harness import call_many

FUNC = 'word_break'
CASES = json.loads("{\"visible_example\": [[\"leetcode\", [\"leet\", \"code\"]]], \"no_split\": [[\"catsandog\", [\"cats\", \"dog\", \"sand\", \"and\", \"cat\"]]], \"empty\": [[\"\", [\"a\"]]], \"needs_backtracking\": [[\"aaaaaaa\", [\"aaa\", \"aaaa\"]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"no_split\": [{\"ok\": false}], \"empty\": [{\"ok\": true}], \"needs_backtracking\": [{\"ok\": true}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_no_split():
    _check("no_split")


def test_empty():
    _check("empty")


def test_needs_backtracking():
    _check("needs_backtracking")
