# ruff: noqa
"""Hidden grader for py-0021 (canary acx-canary-c92e4602fd0ee2b65f840877).

One test per behaviour: visible_example, wrap, mixed_case, negative_shift, full_turns.
"""

import json

from _harness import call_many

FUNC = 'caesar'
CASES = json.loads("{\"visible_example\": [[\"abc\", 1]], \"wrap\": [[\"xyz\", 3]], \"mixed_case\": [[\"Hello, World!\", 13]], \"negative_shift\": [[\"abc\", -1]], \"full_turns\": [[\"Zz\", 52]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"bcd\"}], \"wrap\": [{\"ok\": \"abc\"}], \"mixed_case\": [{\"ok\": \"Uryyb, Jbeyq!\"}], \"negative_shift\": [{\"ok\": \"zab\"}], \"full_turns\": [{\"ok\": \"Zz\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_wrap():
    _check("wrap")


def test_mixed_case():
    _check("mixed_case")


def test_negative_shift():
    _check("negative_shift")


def test_full_turns():
    _check("full_turns")
