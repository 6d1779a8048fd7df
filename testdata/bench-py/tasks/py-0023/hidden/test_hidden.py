# ruff: noqa
"""Hidden grader for py-0023 (canary acx-canary-72827ece67737364e0beb9e6).

One test per behaviour: visible_example, case_and_punctuation, different_counts, empty.
"""

import json

from _harness import call_many

FUNC = 'anagrams'
CASES = json.loads("{\"visible_example\": [[\"listen\", \"silent\"]], \"case_and_punctuation\": [[\"Dormitory\", \"dirty room!\"]], \"different_counts\": [[\"ab\", \"abb\"]], \"empty\": [[\"\", \"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"case_and_punctuation\": [{\"ok\": true}], \"different_counts\": [{\"ok\": false}], \"empty\": [{\"ok\": true}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_case_and_punctuation():
    _check("case_and_punctuation")


def test_different_counts():
    _check("different_counts")


def test_empty():
    _check("empty")
