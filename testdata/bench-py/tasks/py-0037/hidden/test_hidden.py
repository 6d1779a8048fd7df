# ruff: noqa
"""Hidden grader for py-0037 (canary acx-canary-63291eb509e9dad2428cb622).

One test per behaviour: visible_example, paths, directed, unreachable.
"""

import json

from _harness import call_many

FUNC = 'dijkstra'
CASES = json.loads("{\"visible_example\": [[2, [[0, 1, 4]], 0]], \"paths\": [[3, [[0, 1, 1], [1, 2, 2], [0, 2, 5]], 0]], \"directed\": [[3, [[1, 0, 2]], 0]], \"unreachable\": [[3, [], 1], [4, [[0, 1, 1], [1, 0, 1]], 2]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [0, 4]}], \"paths\": [{\"ok\": [0, 1, 3]}], \"directed\": [{\"ok\": [0, -1, -1]}], \"unreachable\": [{\"ok\": [-1, 0, -1]}, {\"ok\": [-1, -1, 0, -1]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_paths():
    _check("paths")


def test_directed():
    _check("directed")


def test_unreachable():
    _check("unreachable")
