# ruff: noqa
"""Hidden grader for py-0136 (canary acx-canary-ea77a14224bf48dfab1fbed1).

One test per behaviour: visible_example, k_one, k_len, too_short.
"""

import json

from _harness import call_many

FUNC = 'sliding_max'
CASES = json.loads("{\"visible_example\": [[[1, 3, -1, -3, 5], 3]], \"k_one\": [[[4, 2], 1]], \"k_len\": [[[1, 2, 3], 3]], \"too_short\": [[[1, 2], 3]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [3, 3, 5]}], \"k_one\": [{\"ok\": [4, 2]}], \"k_len\": [{\"ok\": [3]}], \"too_short\": [{\"ok\": []}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_k_one():
    _check("k_one")


def test_k_len():
    _check("k_len")


def test_too_short():
    _check("too_short")
