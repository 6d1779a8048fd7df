# ruff: noqa
"""Hidden grader for py-0004 (canary acx-canary-d1af722a8690bb0d522711aa)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[1, 3, 2]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 3}]")
HIDDEN = json.loads("[[[]], [[-5, -2, -9]], [[7]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": null}, {\"ok\": -2}, {\"ok\": 7}]")


def test_visible_example():
    assert call_many('max_of_list', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('max_of_list', HIDDEN) == HIDDEN_EXPECTED
