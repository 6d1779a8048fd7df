# ruff: noqa
"""Hidden grader for py-0019 (canary acx-canary-e00518888e96073e7bf7a908)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[1, 2, 3], 2]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": [[1, 2], [3]]}]")
HIDDEN = json.loads("[[[], 3], [[1, 2, 3, 4], 2], [[1], 5]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": []}, {\"ok\": [[1, 2], [3, 4]]}, {\"ok\": [[1]]}]")


def test_visible_example():
    assert call_many('chunk', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('chunk', HIDDEN) == HIDDEN_EXPECTED
