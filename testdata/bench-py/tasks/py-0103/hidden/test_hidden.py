# ruff: noqa
"""Hidden grader for py-0103 (canary acx-canary-9d102ab701fd8d2e176329e1).

One test per behaviour: visible_example, empty_b, keeps_duplicates, all_removed.
"""

import json

from _harness import call_many

FUNC = 'array_diff'
CASES = json.loads("{\"visible_example\": [[[1, 2, 2, 3], [2]]], \"empty_b\": [[[1, 2], []]], \"keeps_duplicates\": [[[1, 1, 3], [3]]], \"all_removed\": [[[4, 4], [4]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 3]}], \"empty_b\": [{\"ok\": [1, 2]}], \"keeps_duplicates\": [{\"ok\": [1, 1]}], \"all_removed\": [{\"ok\": []}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty_b():
    _check("empty_b")


def test_keeps_duplicates():
    _check("keeps_duplicates")


def test_all_removed():
    _check("all_removed")
