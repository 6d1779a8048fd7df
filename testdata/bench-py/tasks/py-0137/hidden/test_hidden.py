# ruff: noqa
"""Hidden grader for py-0137 (canary acx-canary-d4897ae52470d2dec400c9f8).

One test per behaviour: visible_example, small, hundred, large.
"""

import json

from _harness import call_many

FUNC = 'count_primes'
CASES = json.loads("{\"visible_example\": [[10]], \"small\": [[0], [2], [3]], \"hundred\": [[100]], \"large\": [[100000]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 4}], \"small\": [{\"ok\": 0}, {\"ok\": 0}, {\"ok\": 1}], \"hundred\": [{\"ok\": 25}], \"large\": [{\"ok\": 9592}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_small():
    _check("small")


def test_hundred():
    _check("hundred")


def test_large():
    _check("large")
