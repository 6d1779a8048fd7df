# ruff: noqa
"""Hidden grader for py-0037 (canary acx-canary-63291eb509e9dad2428cb622)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[2, [[0, 1, 4]], 0]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": [0, 4]}]")
HIDDEN = json.loads("[[3, [[0, 1, 1], [1, 2, 2], [0, 2, 5]], 0], [3, [], 1], [4, [[0, 1, 1], [1, 0, 1]], 2]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": [0, 1, 3]}, {\"ok\": [-1, 0, -1]}, {\"ok\": [-1, -1, 0, -1]}]")


def test_visible_example():
    assert call_many('dijkstra', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('dijkstra', HIDDEN) == HIDDEN_EXPECTED
