# ruff: noqa
"""Hidden grader for py-0018 (canary acx-canary-9743c9eb7c1d2eb5335e0b0d)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[1, 3, 5], 3]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 1}]")
HIDDEN = json.loads("[[[], 1], [[1, 3, 5, 7], 7], [[1, 3, 5, 7], 4], [[2], 2]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": -1}, {\"ok\": 3}, {\"ok\": -1}, {\"ok\": 0}]")


def test_visible_example():
    assert call_many('binary_search', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('binary_search', HIDDEN) == HIDDEN_EXPECTED
