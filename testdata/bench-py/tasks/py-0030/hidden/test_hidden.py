# ruff: noqa
"""Hidden grader for py-0030 (canary acx-canary-7eda6b87cbff23819a1690f7)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[10, 9, 2, 5, 3, 7]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 3}]")
HIDDEN = json.loads("[[[]], [[5, 5, 5]], [[0, 8, 4, 12, 2, 10, 6, 14, 1, 9]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 0}, {\"ok\": 1}, {\"ok\": 4}]")


def test_visible_example():
    assert call_many('lis', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('lis', HIDDEN) == HIDDEN_EXPECTED
