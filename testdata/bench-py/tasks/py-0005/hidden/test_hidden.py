# ruff: noqa
"""Hidden grader for py-0005 (canary acx-canary-7c953cc280ff4ef56d442aed)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[\"hello\"]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 2}]")
HIDDEN = json.loads("[[\"\"], [\"AEIOU xyz\"], [\"rhythm\"]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 0}, {\"ok\": 5}, {\"ok\": 0}]")


def test_visible_example():
    assert call_many('count_vowels', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('count_vowels', HIDDEN) == HIDDEN_EXPECTED
