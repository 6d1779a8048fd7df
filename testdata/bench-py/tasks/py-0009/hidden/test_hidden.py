# ruff: noqa
"""Hidden grader for py-0009 (canary acx-canary-0e3739afb2a6fda32e0a1d86)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[100]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 212.0}]")
HIDDEN = json.loads("[[0], [-40], [37.5]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 32.0}, {\"ok\": -40.0}, {\"ok\": 99.5}]")


def test_visible_example():
    assert call_many('celsius_to_fahrenheit', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('celsius_to_fahrenheit', HIDDEN) == HIDDEN_EXPECTED
