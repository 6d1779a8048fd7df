# ruff: noqa
"""Hidden grader for py-0040 (canary acx-canary-f0ade371ad068ac4e0174fb0)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[1, 2, 3]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": [1, 3, 2]}]")
HIDDEN = json.loads("[[[3, 2, 1]], [[1, 1, 5]], [[1, 3, 2]], [[]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": [1, 2, 3]}, {\"ok\": [1, 5, 1]}, {\"ok\": [2, 1, 3]}, {\"ok\": []}]")


def test_visible_example():
    assert call_many('next_permutation', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('next_permutation', HIDDEN) == HIDDEN_EXPECTED
