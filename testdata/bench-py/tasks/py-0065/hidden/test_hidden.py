# ruff: noqa
"""Hidden grader for py-0065 (canary acx-canary-8514584d6472f72da3db9478).

One test per behaviour: visible_example, one_island, diagonal, empty, ring.
"""

import json

from _harness import call_many

FUNC = 'count_islands'
CASES = json.loads("{\"visible_example\": [[[[1, 1, 0], [0, 0, 1]]]], \"one_island\": [[[[1, 1], [1, 1]]]], \"diagonal\": [[[[1, 0], [0, 1]]]], \"empty\": [[[]]], \"ring\": [[[[1, 1, 1], [1, 0, 1], [1, 1, 1]]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"one_island\": [{\"ok\": 1}], \"diagonal\": [{\"ok\": 2}], \"empty\": [{\"ok\": 0}], \"ring\": [{\"ok\": 1}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_one_island():
    _check("one_island")


def test_diagonal():
    _check("diagonal")


def test_empty():
    _check("empty")


def test_ring():
    _check("ring")
