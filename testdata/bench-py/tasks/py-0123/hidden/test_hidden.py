# ruff: noqa
"""Hidden grader for py-0123 (canary acx-canary-5cb3cfed189734b14f01ab01).

One test per behaviour: visible_example, no_zeros, all_zeros, false_is_not_zero.
"""

import json

from _harness import call_many

FUNC = 'move_zeros'
CASES = json.loads("{\"visible_example\": [[[0, 1, 0, 3]]], \"no_zeros\": [[[1, 2]]], \"all_zeros\": [[[0, 0]]], \"false_is_not_zero\": [[[false, 0, 2]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 3, 0, 0]}], \"no_zeros\": [{\"ok\": [1, 2]}], \"all_zeros\": [{\"ok\": [0, 0]}], \"false_is_not_zero\": [{\"ok\": [false, 2, 0]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_no_zeros():
    _check("no_zeros")


def test_all_zeros():
    _check("all_zeros")


def test_false_is_not_zero():
    _check("false_is_not_zero")
