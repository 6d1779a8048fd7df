# ruff: noqa
"""Hidden grader for py-0011 (canary acx-canary-147e0975c4ea59a7744b1e21)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[10]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 55}]")
HIDDEN = json.loads("[[0], [1], [2], [90]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 0}, {\"ok\": 1}, {\"ok\": 1}, {\"ok\": 2880067194370816120}]")


def test_visible_example():
    assert call_many('fibonacci', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('fibonacci', HIDDEN) == HIDDEN_EXPECTED
