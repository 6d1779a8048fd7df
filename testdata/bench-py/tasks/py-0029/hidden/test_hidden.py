# ruff: noqa
"""Hidden grader for py-0029 (canary acx-canary-8c8352e31895a8cdf049b432).

One test per behaviour: visible_example, empty, shifted, identical, long.
"""

import json

from _harness import call_many

FUNC = 'edit_distance'
CASES = json.loads("{\"visible_example\": [[\"kitten\", \"sitting\"]], \"empty\": [[\"\", \"abc\"], [\"abc\", \"\"]], \"shifted\": [[\"flaw\", \"lawn\"]], \"identical\": [[\"same\", \"same\"]], \"long\": [[\"intention\", \"execution\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"empty\": [{\"ok\": 3}, {\"ok\": 3}], \"shifted\": [{\"ok\": 2}], \"identical\": [{\"ok\": 0}], \"long\": [{\"ok\": 5}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_shifted():
    _check("shifted")


def test_identical():
    _check("identical")


def test_long():
    _check("long")
