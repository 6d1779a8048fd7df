# ruff: noqa
"""Hidden grader for py-0083 (canary acx-canary-47e2510d8644a5e0a6efc50f).

One test per behaviour: visible_example, three_names, extra_spaces, empty.
"""

import json

from _harness import call_many

FUNC = 'initials'
CASES = json.loads("{\"visible_example\": [[\"ada lovelace\"]], \"three_names\": [[\"grace brewster hopper\"]], \"extra_spaces\": [[\"  alan   turing \"]], \"empty\": [[\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"A.L.\"}], \"three_names\": [{\"ok\": \"G.B.H.\"}], \"extra_spaces\": [{\"ok\": \"A.T.\"}], \"empty\": [{\"ok\": \"\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_three_names():
    _check("three_names")


def test_extra_spaces():
    _check("extra_spaces")


def test_empty():
    _check("empty")
