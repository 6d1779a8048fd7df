# ruff: noqa
"""Hidden grader for py-0006 (canary acx-canary-85eef7963965c36d3bb80ee3)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[3]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": \"Fizz\"}]")
HIDDEN = json.loads("[[5], [15], [7], [30]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": \"Buzz\"}, {\"ok\": \"FizzBuzz\"}, {\"ok\": \"7\"}, {\"ok\": \"FizzBuzz\"}]")


def test_visible_example():
    assert call_many('fizzbuzz', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('fizzbuzz', HIDDEN) == HIDDEN_EXPECTED
