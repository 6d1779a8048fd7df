# ruff: noqa
"""Hidden grader for py-0025 (canary acx-canary-4e7d924afbeaa4ad8cea1689).

One test per behaviour: visible_example, empty, rectangular, column.
"""

import json

from _harness import call_many

FUNC = 'transpose'
CASES = json.loads("{\"visible_example\": [[[[1, 2]]]], \"empty\": [[[]]], \"rectangular\": [[[[1, 2, 3], [4, 5, 6]]]], \"column\": [[[[1], [2]]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [[1], [2]]}], \"empty\": [{\"ok\": []}], \"rectangular\": [{\"ok\": [[1, 4], [2, 5], [3, 6]]}], \"column\": [{\"ok\": [[1, 2]]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_rectangular():
    _check("rectangular")


def test_column():
    _check("column")
