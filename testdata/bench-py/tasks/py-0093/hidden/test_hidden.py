# ruff: noqa
"""Hidden grader for py-0093 (canary acx-canary-8330327baf8584018a8eae11).

One test per behaviour: visible_example, mixed_input, empty, spaces.
"""

import json

from _harness import call_many

FUNC = 'alternate_case'
CASES = json.loads("{\"visible_example\": [[\"abcd\"]], \"mixed_input\": [[\"ABCD\"]], \"empty\": [[\"\"]], \"spaces\": [[\"a b c\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"AbCd\"}], \"mixed_input\": [{\"ok\": \"AbCd\"}], \"empty\": [{\"ok\": \"\"}], \"spaces\": [{\"ok\": \"A B C\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_mixed_input():
    _check("mixed_input")


def test_empty():
    _check("empty")


def test_spaces():
    _check("spaces")
