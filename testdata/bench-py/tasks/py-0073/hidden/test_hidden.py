# ruff: noqa
"""Hidden grader for py-0073 (canary acx-canary-c34a528fcb4f3fdd8238313e).

One test per behaviour: visible_example, absent, case, empty, repeated.
"""

import json

from _harness import call_many

FUNC = 'count_char'
CASES = json.loads("{\"visible_example\": [[\"banana\", \"a\"]], \"absent\": [[\"xyz\", \"a\"]], \"case\": [[\"AaAa\", \"a\"]], \"empty\": [[\"\", \"x\"]], \"repeated\": [[\"aaaa\", \"a\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"absent\": [{\"ok\": 0}], \"case\": [{\"ok\": 2}], \"empty\": [{\"ok\": 0}], \"repeated\": [{\"ok\": 4}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_absent():
    _check("absent")


def test_case():
    _check("case")


def test_empty():
    _check("empty")


def test_repeated():
    _check("repeated")
