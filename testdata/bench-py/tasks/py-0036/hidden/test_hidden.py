# ruff: noqa
"""Hidden grader for py-0036 (canary acx-canary-6a812ea42b8d57484a456703)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[[1, 2, 5], 11]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": 3}]")
HIDDEN = json.loads("[[[2], 3], [[1], 0], [[186, 419, 83, 408], 6249]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": -1}, {\"ok\": 0}, {\"ok\": 20}]")


def test_visible_example():
    assert call_many('min_coins', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('min_coins', HIDDEN) == HIDDEN_EXPECTED
