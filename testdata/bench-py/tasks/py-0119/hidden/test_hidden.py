# ruff: noqa
"""Hidden grader for py-0119 (canary acx-canary-3fd945107b95cc6723b6cbd6).

One test per behaviour: visible_example, multi_digit, empty, single.
"""

import json

from _harness import call_many

FUNC = 'run_length_decode'
CASES = json.loads("{\"visible_example\": [[\"3a2b\"]], \"multi_digit\": [[\"12x\"]], \"empty\": [[\"\"]], \"single\": [[\"1z1y\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"aaabb\"}], \"multi_digit\": [{\"ok\": \"xxxxxxxxxxxx\"}], \"empty\": [{\"ok\": \"\"}], \"single\": [{\"ok\": \"zy\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_multi_digit():
    _check("multi_digit")


def test_empty():
    _check("empty")


def test_single():
    _check("single")
