# ruff: noqa
"""Hidden grader for py-0111 (canary acx-canary-077f20fc9d7008b7adc06b43).

One test per behaviour: visible_example, missing_values, extra_values, empty.
"""

import json

from _harness import call_many

FUNC = 'zip_dict'
CASES = json.loads("{\"visible_example\": [[[\"a\", \"b\"], [1, 2]]], \"missing_values\": [[[\"a\", \"b\", \"c\"], [1]]], \"extra_values\": [[[\"a\"], [1, 2, 3]]], \"empty\": [[[], []]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": {\"a\": 1, \"b\": 2}}], \"missing_values\": [{\"ok\": {\"a\": 1, \"b\": null, \"c\": null}}], \"extra_values\": [{\"ok\": {\"a\": 1}}], \"empty\": [{\"ok\": {}}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_missing_values():
    _check("missing_values")


def test_extra_values():
    _check("extra_values")


def test_empty():
    _check("empty")
