# ruff: noqa
"""Hidden grader for py-0029 (canary acx-canary-8c8352e31895a8cdf049b432)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[\"kitten\", \"sitting\"]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 3}]")
HIDDEN = json.loads("[[\"\", \"abc\"], [\"flaw\", \"lawn\"], [\"same\", \"same\"], [\"intention\", \"execution\"]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": 3}, {\"ok\": 2}, {\"ok\": 0}, {\"ok\": 5}]")


def test_visible_example():
    assert call_many('edit_distance', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('edit_distance', HIDDEN) == HIDDEN_EXPECTED
