# ruff: noqa
"""Hidden grader for py-0017 (canary acx-canary-45274d3178b0fef2bd187924)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[14]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": \"XIV\"}]")
HIDDEN = json.loads("[[1994], [4], [3999], [49]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": \"MCMXCIV\"}, {\"ok\": \"IV\"}, {\"ok\": \"MMMCMXCIX\"}, {\"ok\": \"XLIX\"}]")


def test_visible_example():
    assert call_many('int_to_roman', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('int_to_roman', HIDDEN) == HIDDEN_EXPECTED
