# ruff: noqa
"""Hidden grader for py-0099 (canary acx-canary-242e95f0a8a7dc8bca842c9f).

One test per behaviour: visible_example, duplicates, none, negative.
"""

import json

from _harness import call_many

FUNC = 'pairs_sum'
CASES = json.loads("{\"visible_example\": [[[1, 2, 3, 4], 5]], \"duplicates\": [[[2, 2, 2], 4]], \"none\": [[[1, 1], 5]], \"negative\": [[[-1, 6, 0, 5], 5]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"duplicates\": [{\"ok\": 3}], \"none\": [{\"ok\": 0}], \"negative\": [{\"ok\": 2}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_duplicates():
    _check("duplicates")


def test_none():
    _check("none")


def test_negative():
    _check("negative")
