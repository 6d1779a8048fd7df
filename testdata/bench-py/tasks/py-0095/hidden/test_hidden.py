# ruff: noqa
"""Hidden grader for py-0095 (canary acx-canary-18eb743eadeb7fa549c11668).

One test per behaviour: visible_example, a_longer, b_longer, empty.
"""

import json

from _harness import call_many

FUNC = 'interleave'
CASES = json.loads("{\"visible_example\": [[[1, 2], [\"x\", \"y\"]]], \"a_longer\": [[[1, 2, 3], [\"x\"]]], \"b_longer\": [[[1], [\"x\", \"y\", \"z\"]]], \"empty\": [[[], [1]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, \"x\", 2, \"y\"]}], \"a_longer\": [{\"ok\": [1, \"x\", 2, 3]}], \"b_longer\": [{\"ok\": [1, \"x\", \"y\", \"z\"]}], \"empty\": [{\"ok\": [1]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_a_longer():
    _check("a_longer")


def test_b_longer():
    _check("b_longer")


def test_empty():
    _check("empty")
