# ruff: noqa
"""Hidden grader for py-0132 (canary acx-canary-a4348de8e8917328f13bba45).

One test per behaviour: visible_example, none, multiplicity, empty.
"""

import json

from _harness import call_many

FUNC = 'intersect_sorted'
CASES = json.loads("{\"visible_example\": [[[1, 2, 2, 3], [2, 2, 4]]], \"none\": [[[1], [2]]], \"multiplicity\": [[[1, 1, 1], [1, 1]]], \"empty\": [[[], [1]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [2, 2]}], \"none\": [{\"ok\": []}], \"multiplicity\": [{\"ok\": [1, 1]}], \"empty\": [{\"ok\": []}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_none():
    _check("none")


def test_multiplicity():
    _check("multiplicity")


def test_empty():
    _check("empty")
