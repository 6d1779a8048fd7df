# ruff: noqa
"""Hidden grader for py-0002 (canary acx-canary-62b1907a31f1e5d002ea7c7e)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[2]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": true}]")
HIDDEN = json.loads("[[0], [7], [-4], [-3]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": true}, {\"ok\": false}, {\"ok\": true}, {\"ok\": false}]")


def test_visible_example():
    assert call_many('is_even', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('is_even', HIDDEN) == HIDDEN_EXPECTED
