# ruff: noqa
"""Hidden grader for py-0012 (canary acx-canary-5ed4a5c34b10cb587fe045b4)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[12, 18]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 6}]")
HIDDEN = json.loads("[[0, 0], [-12, 8], [17, 5], [0, 9]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 0}, {\"ok\": 4}, {\"ok\": 1}, {\"ok\": 9}]")


def test_visible_example():
    assert call_many('gcd', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('gcd', HIDDEN) == HIDDEN_EXPECTED
