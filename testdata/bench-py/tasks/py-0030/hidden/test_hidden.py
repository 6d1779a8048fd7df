# ruff: noqa
"""Hidden grader for py-0030 (canary acx-canary-7eda6b87cbff23819a1690f7).

One test per behaviour: visible_example, empty, all_equal, long.
"""

import json

from _harness import call_many

FUNC = 'lis'
CASES = json.loads("{\"visible_example\": [[[10, 9, 2, 5, 3, 7]]], \"empty\": [[[]]], \"all_equal\": [[[5, 5, 5]]], \"long\": [[[0, 8, 4, 12, 2, 10, 6, 14, 1, 9]], [[3, 4, -1, 0, 6, 2, 3]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"empty\": [{\"ok\": 0}], \"all_equal\": [{\"ok\": 1}], \"long\": [{\"ok\": 4}, {\"ok\": 4}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_all_equal():
    _check("all_equal")


def test_long():
    _check("long")
