# ruff: noqa
"""Hidden grader for py-0014 (canary acx-canary-33d5c34ee1f7d783059ac1f0).

One test per behaviour: visible_example, empty, deep, strings.
"""

import json

from _harness import call_many

FUNC = 'flatten'
CASES = json.loads("{\"visible_example\": [[[1, [2, 3]]]], \"empty\": [[[]]], \"deep\": [[[[[[]]], 1, [2, [3, [4]]]]]], \"strings\": [[[\"a\", [\"b\"]]], [[\"[x]\", [\"y\"]]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 2, 3]}], \"empty\": [{\"ok\": []}], \"deep\": [{\"ok\": [1, 2, 3, 4]}], \"strings\": [{\"ok\": [\"a\", \"b\"]}, {\"ok\": [\"[x]\", \"y\"]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_deep():
    _check("deep")


def test_strings():
    _check("strings")
