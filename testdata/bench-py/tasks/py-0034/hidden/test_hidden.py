# ruff: noqa
"""Hidden grader for py-0034 (canary acx-canary-3fbd539a78a9204371edd626)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[1, 2], [10, 15], 2]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 15}]")
HIDDEN = json.loads("[[[], [], 5], [[1, 3, 4, 5], [1, 4, 5, 7], 7], [[5], [10], 4]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 0}, {\"ok\": 9}, {\"ok\": 0}]")


def test_visible_example():
    assert call_many('knapsack', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('knapsack', HIDDEN) == HIDDEN_EXPECTED
