# ruff: noqa
"""Hidden grader for py-0022 (canary acx-canary-0eb58b498fb49a1e5d4dfea8)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[\"aaab\"]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": \"3a1b\"}]")
HIDDEN = json.loads("[[\"\"], [\"abc\"], [\"zzzzzzzzzzzz\"]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": \"\"}, {\"ok\": \"1a1b1c\"}, {\"ok\": \"12z\"}]")


def test_visible_example():
    assert call_many('rle', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('rle', HIDDEN) == HIDDEN_EXPECTED
