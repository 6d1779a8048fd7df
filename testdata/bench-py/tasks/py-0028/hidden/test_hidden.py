# ruff: noqa
"""Hidden grader for py-0028 (canary acx-canary-f726d8360350668732b0d013)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[\"flower\", \"flow\"]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": \"flow\"}]")
HIDDEN = json.loads("[[[]], [[\"dog\", \"racecar\"]], [[\"same\", \"same\"]], [[\"a\"]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": \"\"}, {\"ok\": \"\"}, {\"ok\": \"same\"}, {\"ok\": \"a\"}]")


def test_visible_example():
    assert call_many('lcp', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('lcp', HIDDEN) == HIDDEN_EXPECTED
