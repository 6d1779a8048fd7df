# ruff: noqa
"""Hidden grader for py-0091 (canary acx-canary-4068ee11ca18cbf5cd8ad7ee).

One test per behaviour: visible_example, none, upper, empty.
"""

import json

from _harness import call_many

FUNC = 'vowel_positions'
CASES = json.loads("{\"visible_example\": [[\"hello\"]], \"none\": [[\"rhythm\"]], \"upper\": [[\"AbE\"]], \"empty\": [[\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [1, 4]}], \"none\": [{\"ok\": []}], \"upper\": [{\"ok\": [0, 2]}], \"empty\": [{\"ok\": []}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_none():
    _check("none")


def test_upper():
    _check("upper")


def test_empty():
    _check("empty")
