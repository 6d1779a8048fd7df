# ruff: noqa
"""Hidden grader for py-0098 (canary acx-canary-3d993014a1816a831f7ab0ef).

One test per behaviour: visible_example, short_enough, exact, tiny_limit.
"""

import json

from _harness import call_many

FUNC = 'truncate'
CASES = json.loads("{\"visible_example\": [[\"hello world\", 8]], \"short_enough\": [[\"hi\", 5]], \"exact\": [[\"abcde\", 5]], \"tiny_limit\": [[\"abcdef\", 4]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"hello...\"}], \"short_enough\": [{\"ok\": \"hi\"}], \"exact\": [{\"ok\": \"abcde\"}], \"tiny_limit\": [{\"ok\": \"a...\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_short_enough():
    _check("short_enough")


def test_exact():
    _check("exact")


def test_tiny_limit():
    _check("tiny_limit")
