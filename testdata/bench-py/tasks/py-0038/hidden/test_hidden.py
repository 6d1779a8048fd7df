# ruff: noqa
"""Hidden grader for py-0038 (canary acx-canary-afa3cdbc82edd8b24fa62e68)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[\"1h\"]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 3600}]")
HIDDEN = json.loads("[[\"1h30m\"], [\"45s\"], [\"2h0m5s\"], [\"\"]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 5400}, {\"ok\": 45}, {\"ok\": 7205}, {\"ok\": 0}]")


def test_visible_example():
    assert call_many('parse_duration', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('parse_duration', HIDDEN) == HIDDEN_EXPECTED
