# ruff: noqa
"""Hidden grader for py-0010 (canary acx-canary-87de54eb06e2aa198a393d7a)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[\"abba\"]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": true}]")
HIDDEN = json.loads("[[\"A man, a plan, a canal: Panama\"], [\"ab\"], [\"\"], [\"No 'x' in Nixon\"]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": true}, {\"ok\": false}, {\"ok\": true}, {\"ok\": true}]")


def test_visible_example():
    assert call_many('is_palindrome', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('is_palindrome', HIDDEN) == HIDDEN_EXPECTED
