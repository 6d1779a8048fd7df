# ruff: noqa
"""Hidden grader for py-0021 (canary acx-canary-c92e4602fd0ee2b65f840877)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[\"abc\", 1]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": \"bcd\"}]")
HIDDEN = json.loads("[[\"xyz\", 3], [\"Hello, World!\", 13], [\"abc\", -1], [\"Zz\", 52]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": \"abc\"}, {\"ok\": \"Uryyb, Jbeyq!\"}, {\"ok\": \"zab\"}, {\"ok\": \"Zz\"}]")


def test_visible_example():
    assert call_many('caesar', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('caesar', HIDDEN) == HIDDEN_EXPECTED
