# ruff: noqa
"""Hidden grader for py-0150 (canary acx-canary-4f7a3969859bbac129ee19de).

One test per behaviour: visible_example, empty, same, shuffled.
"""

import json

from _harness import call_many

FUNC = 'edit_script_len'
CASES = json.loads("{\"visible_example\": [[\"abc\", \"abd\"]], \"empty\": [[\"\", \"abc\"]], \"same\": [[\"same\", \"same\"]], \"shuffled\": [[\"abcd\", \"dcba\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"empty\": [{\"ok\": 3}], \"same\": [{\"ok\": 0}], \"shuffled\": [{\"ok\": 6}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_same():
    _check("same")


def test_shuffled():
    _check("shuffled")
