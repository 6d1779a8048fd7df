# ruff: noqa
"""Hidden grader for py-0002 (canary acx-canary-62b1907a31f1e5d002ea7c7e).

One test per behaviour: visible_example, positive, zero, negative, large.
"""

import json

from _harness import call_many

FUNC = 'is_even'
CASES = json.loads("{\"visible_example\": [[2]], \"positive\": [[7], [10]], \"zero\": [[0]], \"negative\": [[-4], [-3]], \"large\": [[1000000000000000001], [1000000000000000000]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"positive\": [{\"ok\": false}, {\"ok\": true}], \"zero\": [{\"ok\": true}], \"negative\": [{\"ok\": true}, {\"ok\": false}], \"large\": [{\"ok\": false}, {\"ok\": true}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_positive():
    _check("positive")


def test_zero():
    _check("zero")


def test_negative():
    _check("negative")


def test_large():
    _check("large")
