# ruff: noqa
"""Hidden grader for py-0024 (canary acx-canary-eb6a8d758505a5a4cc5f7b6c)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[1, 2, 3]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 2}]")
HIDDEN = json.loads("[[[5, 5, 5]], [[]], [[4, 4, 3, 1]], [[-1, -2]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": null}, {\"ok\": null}, {\"ok\": 3}, {\"ok\": -2}]")


def test_visible_example():
    assert call_many('second_largest', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('second_largest', HIDDEN) == HIDDEN_EXPECTED
