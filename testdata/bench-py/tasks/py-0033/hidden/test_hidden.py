# ruff: noqa
"""Hidden grader for py-0033 (canary acx-canary-cf59bbe5971ccdca80c4d17e)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[[1, 2], [3, 4]]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": [1, 2, 4, 3]}]")
HIDDEN = json.loads("[[[]], [[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[1], [2], [3]]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": []}, {\"ok\": [1, 2, 3, 6, 9, 8, 7, 4, 5]}, {\"ok\": [1, 2, 3]}]")


def test_visible_example():
    assert call_many('spiral', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('spiral', HIDDEN) == HIDDEN_EXPECTED
