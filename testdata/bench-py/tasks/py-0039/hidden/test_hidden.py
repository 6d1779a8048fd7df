# ruff: noqa
"""Hidden grader for py-0039 (canary acx-canary-8455c1071bf5b85bc7989d12)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[2, [1, 2, 1]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 2}]")
HIDDEN = json.loads("[[1, [1, 1, 2, 1]], [2, [1, 2, 3, 1, 2, 3]], [3, [1, 2, 3, 1, 4, 5, 2]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 3}, {\"ok\": 6}, {\"ok\": 6}]")


def test_visible_example():
    assert call_many('lru_misses', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('lru_misses', HIDDEN) == HIDDEN_EXPECTED
