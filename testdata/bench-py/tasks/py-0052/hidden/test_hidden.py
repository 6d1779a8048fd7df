# ruff: noqa
"""Hidden grader for py-0052 (canary acx-canary-28713e353862fc4ac61d63fa).

One test per behaviour: visible_example, odd_length, even_length, unsorted.
"""

import json

from _harness import call_many

FUNC = 'median'
CASES = json.loads("{\"visible_example\": [[[1, 2, 3]]], \"odd_length\": [[[1, 5, 9, 10, 12]]], \"even_length\": [[[1, 2, 3, 4]]], \"unsorted\": [[[3, 1, 2]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"odd_length\": [{\"ok\": 9}], \"even_length\": [{\"ok\": 2.5}], \"unsorted\": [{\"ok\": 2}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_odd_length():
    _check("odd_length")


def test_even_length():
    _check("even_length")


def test_unsorted():
    _check("unsorted")
