# ruff: noqa
"""Hidden grader for py-0018 (canary acx-canary-9743c9eb7c1d2eb5335e0b0d).

One test per behaviour: visible_example, empty, found_at_end, missing.
"""

import json

from _harness import call_many

FUNC = 'binary_search'
CASES = json.loads("{\"visible_example\": [[[1, 3, 5], 3]], \"empty\": [[[], 1]], \"found_at_end\": [[[1, 3, 5, 7], 7], [[2], 2]], \"missing\": [[[1, 3, 5, 7], 4]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 1}], \"empty\": [{\"ok\": -1}], \"found_at_end\": [{\"ok\": 3}, {\"ok\": 0}], \"missing\": [{\"ok\": -1}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_found_at_end():
    _check("found_at_end")


def test_missing():
    _check("missing")
