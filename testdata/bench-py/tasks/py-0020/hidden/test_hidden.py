# ruff: noqa
"""Hidden grader for py-0020 (canary acx-canary-b87ec9bb3cace528fab1addb)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[1, 1, 2]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": [1, 2]}]")
HIDDEN = json.loads("[[[]], [[3, 1, 3, 2, 1]], [[\"b\", \"a\", \"b\"]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": []}, {\"ok\": [3, 1, 2]}, {\"ok\": [\"b\", \"a\"]}]")


def test_visible_example():
    assert call_many('dedupe', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('dedupe', HIDDEN) == HIDDEN_EXPECTED
