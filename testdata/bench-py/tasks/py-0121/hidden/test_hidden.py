# ruff: noqa
"""Hidden grader for py-0121 (canary acx-canary-67c2e867946426e5e2d8d664).

One test per behaviour: visible_example, three, single, empty.
"""

import json

from _harness import call_many

FUNC = 'rotate_matrix'
CASES = json.loads("{\"visible_example\": [[[[1, 2], [3, 4]]]], \"three\": [[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]], \"single\": [[[[5]]]], \"empty\": [[[]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [[3, 1], [4, 2]]}], \"three\": [{\"ok\": [[7, 4, 1], [8, 5, 2], [9, 6, 3]]}], \"single\": [{\"ok\": [[5]]}], \"empty\": [{\"ok\": []}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_three():
    _check("three")


def test_single():
    _check("single")


def test_empty():
    _check("empty")
