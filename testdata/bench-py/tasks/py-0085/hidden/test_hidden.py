# ruff: noqa
"""Hidden grader for py-0085 (canary acx-canary-d54fd5b562ddefb5055c9f08).

One test per behaviour: visible_example, second, duplicates, last.
"""

import json

from _harness import call_many

FUNC = 'kth_largest'
CASES = json.loads("{\"visible_example\": [[[3, 1, 2], 1]], \"second\": [[[3, 1, 2], 2]], \"duplicates\": [[[5, 5, 4], 2]], \"last\": [[[9, 7, 8], 3]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"second\": [{\"ok\": 2}], \"duplicates\": [{\"ok\": 5}], \"last\": [{\"ok\": 7}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_second():
    _check("second")


def test_duplicates():
    _check("duplicates")


def test_last():
    _check("last")
