# ruff: noqa
"""Hidden grader for py-0079 (canary acx-canary-ead2dd4c6afee754faa0f5dd).

One test per behaviour: visible_example, digits, empty, all_upper.
"""

import json

from _harness import call_many

FUNC = 'swap_case'
CASES = json.loads("{\"visible_example\": [[\"Hello\"]], \"digits\": [[\"a1B2\"]], \"empty\": [[\"\"]], \"all_upper\": [[\"ABC\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"hELLO\"}], \"digits\": [{\"ok\": \"A1b2\"}], \"empty\": [{\"ok\": \"\"}], \"all_upper\": [{\"ok\": \"abc\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_digits():
    _check("digits")


def test_empty():
    _check("empty")


def test_all_upper():
    _check("all_upper")
