# ruff: noqa
"""Hidden grader for py-0001 (canary acx-canary-1070ab3e8cb8c838e75cc646)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[1, 2]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 3}]")
HIDDEN = json.loads("[[0, 0], [-5, 3], [1000000000000, 1]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 0}, {\"ok\": -2}, {\"ok\": 1000000000001}]")


def test_visible_example():
    assert call_many('add', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('add', HIDDEN) == HIDDEN_EXPECTED
