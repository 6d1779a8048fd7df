# ruff: noqa
"""Hidden grader for py-0015 (canary acx-canary-5f68636388985f4f5a9b1f3e).

One test per behaviour: visible_example, case, punctuation, case_and_punctuation, empty.
"""

import json

from _harness import call_many

FUNC = 'word_count'
CASES = json.loads("{\"visible_example\": [[\"a b a\"]], \"case\": [[\"The the THE\"]], \"punctuation\": [[\"one, two; two: three three three?\"]], \"case_and_punctuation\": [[\"The cat. the CAT!\"]], \"empty\": [[\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": {\"a\": 2, \"b\": 1}}], \"case\": [{\"ok\": {\"the\": 3}}], \"punctuation\": [{\"ok\": {\"one\": 1, \"two\": 2, \"three\": 3}}], \"case_and_punctuation\": [{\"ok\": {\"the\": 2, \"cat\": 2}}], \"empty\": [{\"ok\": {}}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_case():
    _check("case")


def test_punctuation():
    _check("punctuation")


def test_case_and_punctuation():
    _check("case_and_punctuation")


def test_empty():
    _check("empty")
