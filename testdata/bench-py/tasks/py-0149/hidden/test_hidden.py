# ruff: noqa
"""Hidden grader for py-0149 (canary acx-canary-da134be105d70b051360abbe).

One test per behaviour: visible_example, tiny, six, eight.
"""

import json

from _harness import call_many

FUNC = 'n_queens_count'
CASES = json.loads("{\"visible_example\": [[4]], \"tiny\": [[1], [2], [3]], \"six\": [[6]], \"eight\": [[8]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"tiny\": [{\"ok\": 1}, {\"ok\": 0}, {\"ok\": 0}], \"six\": [{\"ok\": 4}], \"eight\": [{\"ok\": 92}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_tiny():
    _check("tiny")


def test_six():
    _check("six")


def test_eight():
    _check("eight")
