# ruff: noqa
"""Hidden grader for py-0124 (canary acx-canary-13be05343c229850ba0c8553).

One test per behaviour: visible_example, none, several, trailing.
"""

import json

from _harness import call_many

FUNC = 'binary_gap'
CASES = json.loads("{\"visible_example\": [[9]], \"none\": [[15], [8]], \"several\": [[529]], \"trailing\": [[20]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"none\": [{\"ok\": 0}, {\"ok\": 0}], \"several\": [{\"ok\": 4}], \"trailing\": [{\"ok\": 1}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_none():
    _check("none")


def test_several():
    _check("several")


def test_trailing():
    _check("trailing")
