# ruff: noqa
"""Hidden grader for py-0014 (canary acx-canary-33d5c34ee1f7d783059ac1f0)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[1, [2, 3]]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": [1, 2, 3]}]")
HIDDEN = json.loads("[[[]], [[[[[]]], 1, [2, [3, [4]]]]], [[\"a\", [\"b\"]]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": []}, {\"ok\": [1, 2, 3, 4]}, {\"ok\": [\"a\", \"b\"]}]")


def test_visible_example():
    assert call_many('flatten', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('flatten', HIDDEN) == HIDDEN_EXPECTED
