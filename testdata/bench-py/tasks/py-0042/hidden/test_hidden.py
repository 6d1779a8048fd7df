# ruff: noqa
"""Hidden grader for py-0042 (canary acx-canary-83bcc11fec8effecaab86db8).

One test per behaviour: visible_example, whole, fractional, empty.
"""

import json

from _harness import call_many

FUNC = 'mean'
CASES = json.loads("{\"visible_example\": [[[1, 2, 3]]], \"whole\": [[[2, 4, 6]]], \"fractional\": [[[1, 2]], [[1, 1, 2]]], \"empty\": [[[]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2.0}], \"whole\": [{\"ok\": 4.0}], \"fractional\": [{\"ok\": 1.5}, {\"ok\": 1.3333333333333333}], \"empty\": [{\"ok\": null}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_whole():
    _check("whole")


def test_fractional():
    _check("fractional")


def test_empty():
    _check("empty")
