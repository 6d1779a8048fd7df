# ruff: noqa
"""Hidden grader for py-0032 (canary acx-canary-01b3c23114f788b69fdf649a).

One test per behaviour: visible_example, division, negative_division, single, subtraction.
"""

import json

from _harness import call_many

FUNC = 'rpn'
CASES = json.loads("{\"visible_example\": [[[\"2\", \"3\", \"+\"]]], \"division\": [[[\"4\", \"13\", \"5\", \"/\", \"+\"]]], \"negative_division\": [[[\"3\", \"-4\", \"/\"]]], \"single\": [[[\"7\"]]], \"subtraction\": [[[\"5\", \"1\", \"2\", \"+\", \"4\", \"*\", \"+\", \"3\", \"-\"]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 5}], \"division\": [{\"ok\": 6}], \"negative_division\": [{\"ok\": 0}], \"single\": [{\"ok\": 7}], \"subtraction\": [{\"ok\": 14}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_division():
    _check("division")


def test_negative_division():
    _check("negative_division")


def test_single():
    _check("single")


def test_subtraction():
    _check("subtraction")
