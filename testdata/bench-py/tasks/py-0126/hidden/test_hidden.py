# ruff: noqa
"""Hidden grader for py-0126 (canary acx-canary-0e7d472f66ae34232bc0ca86).

One test per behaviour: visible_example, not_bijective, length, mismatch.
"""

import json

from _harness import call_many

FUNC = 'word_pattern'
CASES = json.loads("{\"visible_example\": [[\"abba\", \"dog cat cat dog\"]], \"not_bijective\": [[\"abba\", \"dog dog dog dog\"]], \"length\": [[\"aaa\", \"a a\"]], \"mismatch\": [[\"abba\", \"dog cat cat fish\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"not_bijective\": [{\"ok\": false}], \"length\": [{\"ok\": false}], \"mismatch\": [{\"ok\": false}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_not_bijective():
    _check("not_bijective")


def test_length():
    _check("length")


def test_mismatch():
    _check("mismatch")
