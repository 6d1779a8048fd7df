# ruff: noqa
"""Hidden grader for py-0127 (canary acx-canary-67a831f6bfcf661cbdc7417d).

One test per behaviour: visible_example, none, exact_half, long.
"""

import json

from _harness import call_many

FUNC = 'majority'
CASES = json.loads("{\"visible_example\": [[[3, 3, 4]]], \"none\": [[[1, 2, 3]], [[]]], \"exact_half\": [[[1, 1, 2, 2]]], \"long\": [[[2, 2, 1, 1, 2, 2, 1]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"none\": [{\"ok\": null}, {\"ok\": null}], \"exact_half\": [{\"ok\": null}], \"long\": [{\"ok\": 2}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_none():
    _check("none")


def test_exact_half():
    _check("exact_half")


def test_long():
    _check("long")
