# ruff: noqa
"""Hidden grader for py-0053 (canary acx-canary-700975e5114d96b8298d61be).

One test per behaviour: visible_example, basic, teens, larger, hundred_teens.
"""

import json

from _harness import call_many

FUNC = 'ordinal'
CASES = json.loads("{\"visible_example\": [[2]], \"basic\": [[1], [3], [4], [0]], \"teens\": [[11], [12], [13]], \"larger\": [[21], [102]], \"hundred_teens\": [[111], [212]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"2nd\"}], \"basic\": [{\"ok\": \"1st\"}, {\"ok\": \"3rd\"}, {\"ok\": \"4th\"}, {\"ok\": \"0th\"}], \"teens\": [{\"ok\": \"11th\"}, {\"ok\": \"12th\"}, {\"ok\": \"13th\"}], \"larger\": [{\"ok\": \"21st\"}, {\"ok\": \"102nd\"}], \"hundred_teens\": [{\"ok\": \"111th\"}, {\"ok\": \"212th\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_basic():
    _check("basic")


def test_teens():
    _check("teens")


def test_larger():
    _check("larger")


def test_hundred_teens():
    _check("hundred_teens")
