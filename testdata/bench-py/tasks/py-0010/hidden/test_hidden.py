# ruff: noqa
"""Hidden grader for py-0010 (canary acx-canary-87de54eb06e2aa198a393d7a).

One test per behaviour: visible_example, mixed_case, punctuation, sentences, not_palindrome, empty.
"""

import json

from _harness import call_many

FUNC = 'is_palindrome'
CASES = json.loads("{\"visible_example\": [[\"abba\"]], \"mixed_case\": [[\"Abba\"], [\"RaceCar\"]], \"punctuation\": [[\"a,b a\"], [\"race car\"]], \"sentences\": [[\"A man, a plan, a canal: Panama\"], [\"No 'x' in Nixon\"]], \"not_palindrome\": [[\"ab\"], [\"abca\"]], \"empty\": [[\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"mixed_case\": [{\"ok\": true}, {\"ok\": true}], \"punctuation\": [{\"ok\": true}, {\"ok\": true}], \"sentences\": [{\"ok\": true}, {\"ok\": true}], \"not_palindrome\": [{\"ok\": false}, {\"ok\": false}], \"empty\": [{\"ok\": true}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_mixed_case():
    _check("mixed_case")


def test_punctuation():
    _check("punctuation")


def test_sentences():
    _check("sentences")


def test_not_palindrome():
    _check("not_palindrome")


def test_empty():
    _check("empty")
