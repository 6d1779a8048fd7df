# ruff: noqa
"""Hidden grader for py-0147 (canary acx-canary-b59395285fdcb3acceaaf3db).

One test per behaviour: visible_example, sorted, reversed, duplicates.
"""

import json

from _harness import call_many

FUNC = 'count_inversions'
CASES = json.loads("{\"visible_example\": [[[2, 4, 1, 3, 5]]], \"sorted\": [[[1, 2, 3]]], \"reversed\": [[[4, 3, 2, 1]]], \"duplicates\": [[[2, 2, 1]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"sorted\": [{\"ok\": 0}], \"reversed\": [{\"ok\": 6}], \"duplicates\": [{\"ok\": 2}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_sorted():
    _check("sorted")


def test_reversed():
    _check("reversed")


def test_duplicates():
    _check("duplicates")
