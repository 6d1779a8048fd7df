# ruff: noqa
"""Hidden grader for py-0113 (canary acx-canary-df9323cd1c6b5e0836ff6569).

One test per behaviour: visible_example, balanced, open, reversed.
"""

import json

from _harness import call_many

FUNC = 'valid_parentheses_count'
CASES = json.loads("{\"visible_example\": [[\"())\"]], \"balanced\": [[\"(())\"]], \"open\": [[\"(((\"]], \"reversed\": [[\")(\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 1}], \"balanced\": [{\"ok\": 0}], \"open\": [{\"ok\": 3}], \"reversed\": [{\"ok\": 2}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_balanced():
    _check("balanced")


def test_open():
    _check("open")


def test_reversed():
    _check("reversed")
