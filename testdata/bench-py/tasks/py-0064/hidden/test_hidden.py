# ruff: noqa
"""Hidden grader for py-0064 (canary acx-canary-92373cd9a063bd8782fdfc78).

One test per behaviour: visible_example, open, obstacles, blocked_start, single_cell.
"""

import json

from _harness import call_many

FUNC = 'unique_paths'
CASES = json.loads("{\"visible_example\": [[[[0, 0], [0, 0]]]], \"open\": [[[[0, 0, 0], [0, 0, 0], [0, 0, 0]]]], \"obstacles\": [[[[0, 0, 0], [0, 1, 0], [0, 0, 0]]]], \"blocked_start\": [[[[1, 0], [0, 0]]]], \"single_cell\": [[[[0]]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"open\": [{\"ok\": 6}], \"obstacles\": [{\"ok\": 2}], \"blocked_start\": [{\"ok\": 0}], \"single_cell\": [{\"ok\": 1}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_open():
    _check("open")


def test_obstacles():
    _check("obstacles")


def test_blocked_start():
    _check("blocked_start")


def test_single_cell():
    _check("single_cell")
