# ruff: noqa
"""Hidden grader for py-0148 (canary acx-canary-0b769a08b3623f7bc0974a3c).

One test per behaviour: visible_example, dot, no_match, star_zero.
"""

import json

from _harness import call_many

FUNC = 'regex_match'
CASES = json.loads("{\"visible_example\": [[\"aa\", \"a*\"]], \"dot\": [[\"ab\", \".*\"], [\"abc\", \"a.c\"]], \"no_match\": [[\"aa\", \"a\"], [\"ab\", \".*c\"]], \"star_zero\": [[\"aab\", \"c*a*b\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"dot\": [{\"ok\": true}, {\"ok\": true}], \"no_match\": [{\"ok\": false}, {\"ok\": false}], \"star_zero\": [{\"ok\": true}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_dot():
    _check("dot")


def test_no_match():
    _check("no_match")


def test_star_zero():
    _check("star_zero")
