# ruff: noqa
"""Hidden grader for py-0007 (canary acx-canary-9c17d0a2b091f96f4a0e6617)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[4]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 24}]")
HIDDEN = json.loads("[[0], [1], [20]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 1}, {\"ok\": 1}, {\"ok\": 2432902008176640000}]")


def test_visible_example():
    assert call_many('factorial', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('factorial', HIDDEN) == HIDDEN_EXPECTED
