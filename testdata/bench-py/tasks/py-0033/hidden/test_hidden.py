# ruff: noqa
"""Hidden grader for py-0033 (canary acx-canary-cf59bbe5971ccdca80c4d17e).

One test per behaviour: visible_example, empty, square, column, wide.
"""

import json

from _harness import call_many

FUNC = 'spiral'
CASES = json.loads("{\"visible_example\": [[[[1, 2], [3, 4]]]], \"empty\": [[[]]], \"square\": [[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]], \"column\": [[[[1], [2], [3]]]], \"wide\": [[[[1, 2, 3, 4], [5, 6, 7, 8]]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 2, 4, 3]}], \"empty\": [{\"ok\": []}], \"square\": [{\"ok\": [1, 2, 3, 6, 9, 8, 7, 4, 5]}], \"column\": [{\"ok\": [1, 2, 3]}], \"wide\": [{\"ok\": [1, 2, 3, 4, 8, 7, 6, 5]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_square():
    _check("square")


def test_column():
    _check("column")


def test_wide():
    _check("wide")
