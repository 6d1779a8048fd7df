# ruff: noqa
"""Hidden grader for py-0107 (canary acx-canary-b230cc946b117558f4171b59).

One test per behaviour: visible_example, extra_spaces, single, empty.
"""

import json

from _harness import call_many

FUNC = 'reverse_words'
CASES = json.loads("{\"visible_example\": [[\"hello big world\"]], \"extra_spaces\": [[\"  a   b  \"]], \"single\": [[\"word\"]], \"empty\": [[\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"world big hello\"}], \"extra_spaces\": [{\"ok\": \"b a\"}], \"single\": [{\"ok\": \"word\"}], \"empty\": [{\"ok\": \"\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_extra_spaces():
    _check("extra_spaces")


def test_single():
    _check("single")


def test_empty():
    _check("empty")
