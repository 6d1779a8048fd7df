# ruff: noqa
"""Hidden grader for py-0138 (canary acx-canary-f58146aedff242bf08704344).

One test per behaviour: visible_example, case, empty, duplicates.
"""

import json

from _harness import call_many

FUNC = 'group_anagrams_count'
CASES = json.loads("{\"visible_example\": [[[\"eat\", \"tea\", \"tan\"]]], \"case\": [[[\"Ate\", \"eat\"]]], \"empty\": [[[]]], \"duplicates\": [[[\"ab\", \"ab\", \"ba\"]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2}], \"case\": [{\"ok\": 1}], \"empty\": [{\"ok\": 0}], \"duplicates\": [{\"ok\": 1}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_case():
    _check("case")


def test_empty():
    _check("empty")


def test_duplicates():
    _check("duplicates")
