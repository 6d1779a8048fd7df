# ruff: noqa
"""Hidden grader for py-0022 (canary acx-canary-0eb58b498fb49a1e5d4dfea8).

One test per behaviour: visible_example, empty, singles, long_run.
"""

import json

from _harness import call_many

FUNC = 'rle'
CASES = json.loads("{\"visible_example\": [[\"aaab\"]], \"empty\": [[\"\"]], \"singles\": [[\"abc\"]], \"long_run\": [[\"zzzzzzzzzzzz\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"3a1b\"}], \"empty\": [{\"ok\": \"\"}], \"singles\": [{\"ok\": \"1a1b1c\"}], \"long_run\": [{\"ok\": \"12z\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_singles():
    _check("singles")


def test_long_run():
    _check("long_run")
