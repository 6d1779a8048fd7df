# ruff: noqa
"""Hidden grader for py-0038 (canary acx-canary-afa3cdbc82edd8b24fa62e68).

One test per behaviour: visible_example, combined, multi_digit, empty.
"""

import json

from _harness import call_many

FUNC = 'parse_duration'
CASES = json.loads("{\"visible_example\": [[\"1h\"]], \"combined\": [[\"1h30m\"], [\"2h0m5s\"]], \"multi_digit\": [[\"45s\"], [\"90m\"]], \"empty\": [[\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3600}], \"combined\": [{\"ok\": 5400}, {\"ok\": 7205}], \"multi_digit\": [{\"ok\": 45}, {\"ok\": 5400}], \"empty\": [{\"ok\": 0}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_combined():
    _check("combined")


def test_multi_digit():
    _check("multi_digit")


def test_empty():
    _check("empty")
