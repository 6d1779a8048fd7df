# ruff: noqa
"""Hidden grader for py-0145 (canary acx-canary-76cb865455de9b29c0a89c54).

One test per behaviour: visible_example, empty, skip_two, single.
"""

import json

from _harness import call_many

FUNC = 'house_robber'
CASES = json.loads("{\"visible_example\": [[[1, 2, 3, 1]]], \"empty\": [[[]]], \"skip_two\": [[[2, 1, 1, 2]]], \"single\": [[[7]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 4}], \"empty\": [{\"ok\": 0}], \"skip_two\": [{\"ok\": 4}], \"single\": [{\"ok\": 7}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_skip_two():
    _check("skip_two")


def test_single():
    _check("single")
