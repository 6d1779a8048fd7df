# ruff: noqa
"""Hidden grader for py-0081 (canary acx-canary-a8066b68feeecdc3d533c61f).

One test per behaviour: visible_example, empty, one_word, spaces.
"""

import json

from _harness import call_many

FUNC = 'average_word_length'
CASES = json.loads("{\"visible_example\": [[\"ab abcd\"]], \"empty\": [[\"\"]], \"one_word\": [[\"hello\"]], \"spaces\": [[\"  a  bb  \"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3.0}], \"empty\": [{\"ok\": 0.0}], \"one_word\": [{\"ok\": 5.0}], \"spaces\": [{\"ok\": 1.5}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_one_word():
    _check("one_word")


def test_spaces():
    _check("spaces")
