# ruff: noqa
"""Hidden grader for py-0087 (canary acx-canary-c16d45d27af700030c9aac55).

One test per behaviour: visible_example, already_wide, spaces, empty.
"""

import json

from _harness import call_many

FUNC = 'pad_left'
CASES = json.loads("{\"visible_example\": [[\"7\", 3, \"0\"]], \"already_wide\": [[\"12345\", 3, \"0\"]], \"spaces\": [[\"ab\", 4, \" \"]], \"empty\": [[\"\", 2, \"*\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"007\"}], \"already_wide\": [{\"ok\": \"12345\"}], \"spaces\": [{\"ok\": \"  ab\"}], \"empty\": [{\"ok\": \"**\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_already_wide():
    _check("already_wide")


def test_spaces():
    _check("spaces")


def test_empty():
    _check("empty")
