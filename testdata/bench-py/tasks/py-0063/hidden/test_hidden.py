# ruff: noqa
"""Hidden grader for py-0063 (canary acx-canary-2f939b101b66601316b3e51e).

One test per behaviour: visible_example, ties, k_too_large, case_insensitive.
"""

import json

from _harness import call_many

FUNC = 'top_k_words'
CASES = json.loads("{\"visible_example\": [[\"b a b c b a\", 2]], \"ties\": [[\"pear fig apple fig apple pear\", 2]], \"k_too_large\": [[\"x y x\", 5]], \"case_insensitive\": [[\"Dog dog cat\", 1]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [\"b\", \"a\"]}], \"ties\": [{\"ok\": [\"apple\", \"fig\"]}], \"k_too_large\": [{\"ok\": [\"x\", \"y\"]}], \"case_insensitive\": [{\"ok\": [\"dog\"]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_ties():
    _check("ties")


def test_k_too_large():
    _check("k_too_large")


def test_case_insensitive():
    _check("case_insensitive")
