# ruff: noqa
"""Hidden grader for py-0047 (canary acx-canary-04367d08dec3b969b90b2cdd).

One test per behaviour: visible_example, identical, case_sensitive, length_mismatch.
"""

import json

from _harness import call_many

FUNC = 'hamming'
CASES = json.loads("{\"visible_example\": [[\"karolin\", \"kathrin\"]], \"identical\": [[\"abc\", \"abc\"], [\"\", \"\"]], \"case_sensitive\": [[\"aB\", \"ab\"]], \"length_mismatch\": [[\"abc\", \"ab\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"identical\": [{\"ok\": 0}, {\"ok\": 0}], \"case_sensitive\": [{\"ok\": 1}], \"length_mismatch\": [{\"raised\": \"ValueError\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_identical():
    _check("identical")


def test_case_sensitive():
    _check("case_sensitive")


def test_length_mismatch():
    _check("length_mismatch")
