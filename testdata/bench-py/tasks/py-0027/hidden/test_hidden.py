# ruff: noqa
"""Hidden grader for py-0027 (canary acx-canary-89cbe93b2718e4a7d3f5af03)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[[1, 3], [2, 4]]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": [[1, 4]]}]")
HIDDEN = json.loads("[[[]], [[[5, 6], [1, 2], [2, 3]]], [[[1, 10], [2, 3], [11, 12]]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": []}, {\"ok\": [[1, 3], [5, 6]]}, {\"ok\": [[1, 10], [11, 12]]}]")


def test_visible_example():
    assert call_many('merge_intervals', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('merge_intervals', HIDDEN) == HIDDEN_EXPECTED
