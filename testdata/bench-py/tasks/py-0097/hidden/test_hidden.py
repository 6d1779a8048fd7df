# ruff: noqa
"""Hidden grader for py-0097 (canary acx-canary-492af7afc21286d098aee61a).

One test per behaviour: visible_example, no_letters, upper, with_digits.
"""

import json

from _harness import call_many

FUNC = 'vowel_ratio'
CASES = json.loads("{\"visible_example\": [[\"abba\"]], \"no_letters\": [[\"123\"], [\"\"]], \"upper\": [[\"AEb\"]], \"with_digits\": [[\"a1b2\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 0.5}], \"no_letters\": [{\"ok\": 0.0}, {\"ok\": 0.0}], \"upper\": [{\"ok\": 0.6666666666666666}], \"with_digits\": [{\"ok\": 0.5}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_no_letters():
    _check("no_letters")


def test_upper():
    _check("upper")


def test_with_digits():
    _check("with_digits")
