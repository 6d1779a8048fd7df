# ruff: noqa
"""Hidden grader for py-0072 (canary acx-canary-078f551b73170c9d1c7a9fc5).

One test per behaviour: visible_example, empty, single, falsy_last.
"""

import json

from _harness import call_many

FUNC = 'last_item'
CASES = json.loads("{\"visible_example\": [[[1, 2, 3]]], \"empty\": [[[]]], \"single\": [[[7]]], \"falsy_last\": [[[1, 0]], [[5, null]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"empty\": [{\"ok\": null}], \"single\": [{\"ok\": 7}], \"falsy_last\": [{\"ok\": 0}, {\"ok\": null}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_single():
    _check("single")


def test_falsy_last():
    _check("falsy_last")
