# ruff: noqa
"""Hidden grader for py-0019 (canary acx-canary-e00518888e96073e7bf7a908).

One test per behaviour: visible_example, empty, even, shorter_than_n, remainder.
"""

import json

from _harness import call_many

FUNC = 'chunk'
CASES = json.loads("{\"visible_example\": [[[1, 2, 3], 2]], \"empty\": [[[], 3]], \"even\": [[[1, 2, 3, 4], 2]], \"shorter_than_n\": [[[1], 5]], \"remainder\": [[[1, 2, 3, 4, 5], 2]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [[1, 2], [3]]}], \"empty\": [{\"ok\": []}], \"even\": [{\"ok\": [[1, 2], [3, 4]]}], \"shorter_than_n\": [{\"ok\": [[1]]}], \"remainder\": [{\"ok\": [[1, 2], [3, 4], [5]]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_even():
    _check("even")


def test_shorter_than_n():
    _check("shorter_than_n")


def test_remainder():
    _check("remainder")
