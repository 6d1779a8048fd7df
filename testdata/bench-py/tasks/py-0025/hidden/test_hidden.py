# ruff: noqa
"""Hidden grader for py-0025 (canary acx-canary-4e7d924afbeaa4ad8cea1689)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[[1, 2]]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": [[1], [2]]}]")
HIDDEN = json.loads("[[[]], [[[1, 2, 3], [4, 5, 6]]], [[[1], [2]]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": []}, {\"ok\": [[1, 4], [2, 5], [3, 6]]}, {\"ok\": [[1, 2]]}]")


def test_visible_example():
    assert call_many('transpose', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('transpose', HIDDEN) == HIDDEN_EXPECTED
