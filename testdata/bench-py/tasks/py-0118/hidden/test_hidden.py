# ruff: noqa
"""Hidden grader for py-0118 (canary acx-canary-4c5c008f8a84ae7338a83551).

One test per behaviour: visible_example, empty, end_run, all_same.
"""

import json

from _harness import call_many

FUNC = 'longest_run'
CASES = json.loads("{\"visible_example\": [[[1, 1, 2]]], \"empty\": [[[]]], \"end_run\": [[[1, 2, 2, 2]]], \"all_same\": [[[4, 4, 4, 4]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"empty\": [{\"ok\": 0}], \"end_run\": [{\"ok\": 3}], \"all_same\": [{\"ok\": 4}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_end_run():
    _check("end_run")


def test_all_same():
    _check("all_same")
