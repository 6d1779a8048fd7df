# ruff: noqa
"""Hidden grader for py-0112 (canary acx-canary-efbf0697cc8c5c7b98bdb11e).

One test per behaviour: visible_example, empty, order, duplicates.
"""

import json

from _harness import call_many

FUNC = 'group_by_length'
CASES = json.loads("{\"visible_example\": [[[\"a\", \"bb\", \"c\"]]], \"empty\": [[[]]], \"order\": [[[\"cc\", \"aa\", \"b\"]]], \"duplicates\": [[[\"x\", \"x\"]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": {\"1\": [\"a\", \"c\"], \"2\": [\"bb\"]}}], \"empty\": [{\"ok\": {}}], \"order\": [{\"ok\": {\"2\": [\"cc\", \"aa\"], \"1\": [\"b\"]}}], \"duplicates\": [{\"ok\": {\"1\": [\"x\", \"x\"]}}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_order():
    _check("order")


def test_duplicates():
    _check("duplicates")
