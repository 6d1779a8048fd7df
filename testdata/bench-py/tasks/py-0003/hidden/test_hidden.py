# ruff: noqa
"""Hidden grader for py-0003 (canary acx-canary-1499b69a4b8c794722b3f8d8)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[\"abc\"]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": \"cba\"}]")
HIDDEN = json.loads("[[\"\"], [\"a\"], [\"racecar!\"]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": \"\"}, {\"ok\": \"a\"}, {\"ok\": \"!racecar\"}]")


def test_visible_example():
    assert call_many('reverse_string', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('reverse_string', HIDDEN) == HIDDEN_EXPECTED
