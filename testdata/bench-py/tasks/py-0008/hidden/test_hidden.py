# ruff: noqa
"""Hidden grader for py-0008 (canary acx-canary-4ca4474db08e386170a091ff)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[123]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 6}]")
HIDDEN = json.loads("[[0], [-907], [99999]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 0}, {\"ok\": 16}, {\"ok\": 45}]")


def test_visible_example():
    assert call_many('sum_digits', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('sum_digits', HIDDEN) == HIDDEN_EXPECTED
