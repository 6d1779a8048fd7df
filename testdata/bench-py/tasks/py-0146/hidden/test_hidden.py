# ruff: noqa
"""Hidden grader for py-0146 (canary acx-canary-1da4c86401768a0d3ed800be).

One test per behaviour: visible_example, cycle, self_loop, none, long_cycle.
"""

import json

from _harness import call_many

FUNC = 'course_order_possible'
CASES = json.loads("{\"visible_example\": [[2, [[1, 0]]]], \"cycle\": [[2, [[1, 0], [0, 1]]]], \"self_loop\": [[1, [[0, 0]]]], \"none\": [[3, []]], \"long_cycle\": [[3, [[0, 1], [1, 2], [2, 0]]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"cycle\": [{\"ok\": false}], \"self_loop\": [{\"ok\": false}], \"none\": [{\"ok\": true}], \"long_cycle\": [{\"ok\": false}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_cycle():
    _check("cycle")


def test_self_loop():
    _check("self_loop")


def test_none():
    _check("none")


def test_long_cycle():
    _check("long_cycle")
