# ruff: noqa
"""Hidden grader for py-0116 (canary acx-canary-06bfda239167a5b5d2146b5e).

One test per behaviour: visible_example, flat, none, deep.
"""

import json

from _harness import call_many

FUNC = 'bracket_depth'
CASES = json.loads("{\"visible_example\": [[\"(a(b))\"]], \"flat\": [[\"()()\"]], \"none\": [[\"abc\"]], \"deep\": [[\"((()))()\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"flat\": [{\"ok\": 1}], \"none\": [{\"ok\": 0}], \"deep\": [{\"ok\": 3}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_flat():
    _check("flat")


def test_none():
    _check("none")


def test_deep():
    _check("deep")
