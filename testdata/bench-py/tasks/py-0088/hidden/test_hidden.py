# ruff: noqa
"""Hidden grader for py-0088 (canary acx-canary-99adbb27c613bfd3c6505aa4).

One test per behaviour: visible_example, empty, negatives, already.
"""

import json

from _harness import call_many

FUNC = 'remove_duplicates_sorted'
CASES = json.loads("{\"visible_example\": [[[3, 1, 3]]], \"empty\": [[[]]], \"negatives\": [[[-1, -5, -1]]], \"already\": [[[1, 2, 3]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 3]}], \"empty\": [{\"ok\": []}], \"negatives\": [{\"ok\": [-5, -1]}], \"already\": [{\"ok\": [1, 2, 3]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_negatives():
    _check("negatives")


def test_already():
    _check("already")
