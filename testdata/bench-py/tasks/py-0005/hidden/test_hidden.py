# ruff: noqa
"""Hidden grader for py-0005 (canary acx-canary-7c953cc280ff4ef56d442aed).

One test per behaviour: visible_example, empty, upper_case, y_is_not_a_vowel.
"""

import json

from _harness import call_many

FUNC = 'count_vowels'
CASES = json.loads("{\"visible_example\": [[\"hello\"]], \"empty\": [[\"\"]], \"upper_case\": [[\"AEIOU\"], [\"HeLLO\"]], \"y_is_not_a_vowel\": [[\"rhythm\"], [\"AEIOU xyz\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"empty\": [{\"ok\": 0}], \"upper_case\": [{\"ok\": 5}, {\"ok\": 2}], \"y_is_not_a_vowel\": [{\"ok\": 0}, {\"ok\": 5}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_upper_case():
    _check("upper_case")


def test_y_is_not_a_vowel():
    _check("y_is_not_a_vowel")
