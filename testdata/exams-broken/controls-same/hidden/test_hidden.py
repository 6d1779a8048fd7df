# ruff: noqa
"""Hidden grader for controls-same (canary acx-canary-2166470751363b7c9393c057).

One test per behaviour: visible_example, zeros, negative, coprime.
"""

import json

from _harness import call_many

FUNC = 'gcd'
CASES = json.loads("{\"visible_example\": [[12, 18]], \"zeros\": [[0, 0], [0, 9]], \"negative\": [[-12, 8], [12, -8], [-4, -6]], \"coprime\": [[17, 5]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 6}], \"zeros\": [{\"ok\": 0}, {\"ok\": 9}], \"negative\": [{\"ok\": 4}, {\"ok\": 4}, {\"ok\": 2}], \"coprime\": [{\"ok\": 1}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_zeros():
    _check("zeros")


def test_negative():
    _check("negative")


def test_coprime():
    _check("coprime")
