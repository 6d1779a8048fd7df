# ruff: noqa
"""Hidden grader for py-0060 (canary acx-canary-20c461e7a5386c9863fe04d0).

One test per behaviour: visible_example, flat, deep, empty_nested.
"""

import json

from _harness import call_many

FUNC = 'flatten_dict'
CASES = json.loads("{\"visible_example\": [[{\"a\": {\"b\": 1}, \"c\": 2}]], \"flat\": [[{\"x\": 1}]], \"deep\": [[{\"a\": {\"b\": {\"c\": {\"d\": 4}}}}]], \"empty_nested\": [[{\"a\": {}, \"b\": 1}]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": {\"a.b\": 1, \"c\": 2}}], \"flat\": [{\"ok\": {\"x\": 1}}], \"deep\": [{\"ok\": {\"a.b.c.d\": 4}}], \"empty_nested\": [{\"ok\": {\"b\": 1}}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_flat():
    _check("flat")


def test_deep():
    _check("deep")


def test_empty_nested():
    _check("empty_nested")
