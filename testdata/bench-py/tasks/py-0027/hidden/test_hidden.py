# ruff: noqa
"""Hidden grader for py-0027 (canary acx-canary-89cbe93b2718e4a7d3f5af03).

One test per behaviour: visible_example, empty, unsorted_touching, contained.
"""

import json

from _harness import call_many

FUNC = 'merge_intervals'
CASES = json.loads("{\"visible_example\": [[[[1, 3], [2, 4]]]], \"empty\": [[[]]], \"unsorted_touching\": [[[[5, 6], [1, 2], [2, 3]]]], \"contained\": [[[[1, 10], [2, 3], [11, 12]]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [[1, 4]]}], \"empty\": [{\"ok\": []}], \"unsorted_touching\": [{\"ok\": [[1, 3], [5, 6]]}], \"contained\": [{\"ok\": [[1, 10], [11, 12]]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_unsorted_touching():
    _check("unsorted_touching")


def test_contained():
    _check("contained")
