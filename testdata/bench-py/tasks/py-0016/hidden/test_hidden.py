# ruff: noqa
"""Hidden grader for py-0016 (canary acx-canary-20c7585c6c309c05747fcd2e)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[\"XIV\"]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 14}]")
HIDDEN = json.loads("[[\"MCMXCIV\"], [\"IV\"], [\"MMXXVI\"], [\"XLIX\"]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 1994}, {\"ok\": 4}, {\"ok\": 2026}, {\"ok\": 49}]")


def test_visible_example():
    assert call_many('roman_to_int', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('roman_to_int', HIDDEN) == HIDDEN_EXPECTED
