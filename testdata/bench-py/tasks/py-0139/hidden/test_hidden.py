# ruff: noqa
"""Hidden grader for py-0139 (canary acx-canary-c2d262783e6d04220420cd54).

One test per behaviour: visible_example, zeros, long, empty.
"""

import json

from _harness import call_many

FUNC = 'decode_ways'
CASES = json.loads("{\"visible_example\": [[\"12\"]], \"zeros\": [[\"10\"], [\"06\"], [\"100\"]], \"long\": [[\"226\"], [\"11106\"]], \"empty\": [[\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"zeros\": [{\"ok\": 1}, {\"ok\": 0}, {\"ok\": 0}], \"long\": [{\"ok\": 3}, {\"ok\": 2}], \"empty\": [{\"ok\": 0}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_zeros():
    _check("zeros")


def test_long():
    _check("long")


def test_empty():
    _check("empty")
