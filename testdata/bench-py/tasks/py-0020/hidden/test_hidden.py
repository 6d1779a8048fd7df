# ruff: noqa
"""Hidden grader for py-0020 (canary acx-canary-b87ec9bb3cace528fab1addb).

One test per behaviour: visible_example, empty, already_unique, repeat_later, mixed, strings.
"""

import json

from _harness import call_many

FUNC = 'dedupe'
CASES = json.loads("{\"visible_example\": [[[1, 1, 2]]], \"empty\": [[[]]], \"already_unique\": [[[5, 4, 3]]], \"repeat_later\": [[[1, 2, 1, 3]]], \"mixed\": [[[3, 1, 3, 2, 1]]], \"strings\": [[[\"b\", \"a\", \"b\"]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 2]}], \"empty\": [{\"ok\": []}], \"already_unique\": [{\"ok\": [5, 4, 3]}], \"repeat_later\": [{\"ok\": [1, 2, 3]}], \"mixed\": [{\"ok\": [3, 1, 2]}], \"strings\": [{\"ok\": [\"b\", \"a\"]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_already_unique():
    _check("already_unique")


def test_repeat_later():
    _check("repeat_later")


def test_mixed():
    _check("mixed")


def test_strings():
    _check("strings")
