# ruff: noqa
"""Hidden grader for py-0035 (canary acx-canary-4253a8caa15c8d3766f52f20)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[\"leetcode\", [\"leet\", \"code\"]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": true}]")
HIDDEN = json.loads("[[\"catsandog\", [\"cats\", \"dog\", \"sand\", \"and\", \"cat\"]], [\"\", [\"a\"]], [\"aaaaaaa\", [\"aaa\", \"aaaa\"]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": false}, {\"ok\": true}, {\"ok\": true}]")


def test_visible_example():
    assert call_many('word_break', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('word_break', HIDDEN) == HIDDEN_EXPECTED
