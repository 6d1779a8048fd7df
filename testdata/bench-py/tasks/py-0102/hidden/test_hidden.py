# ruff: noqa
"""Hidden grader for py-0102 (canary acx-canary-220516af2e477c60a27996f4).

One test per behaviour: visible_example, hyphen, case, empty.
"""

import json

from _harness import call_many

FUNC = 'acronym'
CASES = json.loads("{\"visible_example\": [[\"portable network graphics\"]], \"hyphen\": [[\"complementary metal-oxide semiconductor\"]], \"case\": [[\"Ruby on Rails\"]], \"empty\": [[\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"PNG\"}], \"hyphen\": [{\"ok\": \"CMOS\"}], \"case\": [{\"ok\": \"ROR\"}], \"empty\": [{\"ok\": \"\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_hyphen():
    _check("hyphen")


def test_case():
    _check("case")


def test_empty():
    _check("empty")
