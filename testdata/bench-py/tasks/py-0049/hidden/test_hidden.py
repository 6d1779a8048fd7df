# ruff: noqa
"""Hidden grader for py-0049 (canary acx-canary-715ef4192ec2cc44c327ea53).

One test per behaviour: visible_example, first_longer, second_longer, one_empty, duplicates.
"""

import json

from _harness import call_many

FUNC = 'merge_sorted'
CASES = json.loads("{\"visible_example\": [[[1, 4], [2, 3]]], \"first_longer\": [[[1, 5, 9], [2]]], \"second_longer\": [[[1], [2, 3, 4]]], \"one_empty\": [[[], [1, 2]]], \"duplicates\": [[[1, 2, 2, 7], [2, 3]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 2, 3, 4]}], \"first_longer\": [{\"ok\": [1, 2, 5, 9]}], \"second_longer\": [{\"ok\": [1, 2, 3, 4]}], \"one_empty\": [{\"ok\": [1, 2]}], \"duplicates\": [{\"ok\": [1, 2, 2, 2, 3, 7]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_first_longer():
    _check("first_longer")


def test_second_longer():
    _check("second_longer")


def test_one_empty():
    _check("one_empty")


def test_duplicates():
    _check("duplicates")
