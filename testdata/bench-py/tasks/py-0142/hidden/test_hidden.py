# ruff: noqa
"""Hidden grader for py-0142 (canary acx-canary-888105d02f6d523cc290ba4f).

One test per behaviour: visible_example, negative_den, zero, already.
"""

import json

from _harness import call_many

FUNC = 'simplify_fraction'
CASES = json.loads("{\"visible_example\": [[2, 4]], \"negative_den\": [[3, -6]], \"zero\": [[0, 5]], \"already\": [[3, 7]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 2]}], \"negative_den\": [{\"ok\": [-1, 2]}], \"zero\": [{\"ok\": [0, 1]}], \"already\": [{\"ok\": [3, 7]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_negative_den():
    _check("negative_den")


def test_zero():
    _check("zero")


def test_already():
    _check("already")
