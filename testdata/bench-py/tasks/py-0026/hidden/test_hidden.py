# ruff: noqa
"""Hidden grader for py-0026 (canary acx-canary-015077205bdbc9a12de8e8fd).

One test per behaviour: visible_example, mismatched, nested, unclosed, empty.
"""

import json

from _harness import call_many

FUNC = 'balanced'
CASES = json.loads("{\"visible_example\": [[\"([])\"]], \"mismatched\": [[\"(]\"], [\"}{\"]], \"nested\": [[\"([{}])x\"]], \"unclosed\": [[\"((\"]], \"empty\": [[\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"mismatched\": [{\"ok\": false}, {\"ok\": false}], \"nested\": [{\"ok\": true}], \"unclosed\": [{\"ok\": false}], \"empty\": [{\"ok\": true}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_mismatched():
    _check("mismatched")


def test_nested():
    _check("nested")


def test_unclosed():
    _check("unclosed")


def test_empty():
    _check("empty")
