# ruff: noqa
"""Hidden grader for py-0082 (canary acx-canary-d60e600be3c2675ddbc0aa55).

One test per behaviour: visible_example, descending, empty, equal, one_drop.
"""

import json

from _harness import call_many

FUNC = 'is_sorted'
CASES = json.loads("{\"visible_example\": [[[1, 2, 2, 3]]], \"descending\": [[[3, 2, 1]]], \"empty\": [[[]]], \"equal\": [[[5, 5, 5]]], \"one_drop\": [[[1, 3, 2, 4]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"descending\": [{\"ok\": false}], \"empty\": [{\"ok\": true}], \"equal\": [{\"ok\": true}], \"one_drop\": [{\"ok\": false}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_descending():
    _check("descending")


def test_empty():
    _check("empty")


def test_equal():
    _check("equal")


def test_one_drop():
    _check("one_drop")
