# ruff: noqa
"""Hidden grader for py-0090 (canary acx-canary-bf0f06efacf1f40db61130b6).

One test per behaviour: visible_example, coprime, multiple, equal.
"""

import json

from _harness import call_many

FUNC = 'lcm'
CASES = json.loads("{\"visible_example\": [[4, 6]], \"coprime\": [[3, 5]], \"multiple\": [[4, 12]], \"equal\": [[7, 7]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 12}], \"coprime\": [{\"ok\": 15}], \"multiple\": [{\"ok\": 12}], \"equal\": [{\"ok\": 7}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_coprime():
    _check("coprime")


def test_multiple():
    _check("multiple")


def test_equal():
    _check("equal")
