# ruff: noqa
"""Hidden grader for py-0125 (canary acx-canary-ce0b745daea13dbab0635405).

One test per behaviour: visible_example, one, unhappy, large_happy.
"""

import json

from _harness import call_many

FUNC = 'happy_number'
CASES = json.loads("{\"visible_example\": [[19]], \"one\": [[1]], \"unhappy\": [[2], [4]], \"large_happy\": [[100], [7]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"one\": [{\"ok\": true}], \"unhappy\": [{\"ok\": false}, {\"ok\": false}], \"large_happy\": [{\"ok\": true}, {\"ok\": true}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_one():
    _check("one")


def test_unhappy():
    _check("unhappy")


def test_large_happy():
    _check("large_happy")
