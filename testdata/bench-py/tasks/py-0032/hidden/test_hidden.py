# ruff: noqa
"""Hidden grader for py-0032 (canary acx-canary-01b3c23114f788b69fdf649a)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[\"2\", \"3\", \"+\"]]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 5}]")
HIDDEN = json.loads("[[[\"4\", \"13\", \"5\", \"/\", \"+\"]], [[\"3\", \"-4\", \"/\"]], [[\"7\"]]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 6}, {\"ok\": 0}, {\"ok\": 7}]")


def test_visible_example():
    assert call_many('rpn', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('rpn', HIDDEN) == HIDDEN_EXPECTED
