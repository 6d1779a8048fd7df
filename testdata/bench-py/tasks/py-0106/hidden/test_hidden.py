# ruff: noqa
"""Hidden grader for py-0106 (canary acx-canary-db9666491f3a45ab9db6e253).

One test per behaviour: visible_example, case, spaces, not.
"""

import json

from _harness import call_many

FUNC = 'is_anagram'
CASES = json.loads("{\"visible_example\": [[\"listen\", \"silent\"]], \"case\": [[\"Listen\", \"Silent\"]], \"spaces\": [[\"dormitory\", \"dirty room\"]], \"not\": [[\"abc\", \"abd\"], [\"aab\", \"abb\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"case\": [{\"ok\": true}], \"spaces\": [{\"ok\": true}], \"not\": [{\"ok\": false}, {\"ok\": false}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_case():
    _check("case")


def test_spaces():
    _check("spaces")


def test_not():
    _check("not")
