# ruff: noqa
"""Hidden grader for py-0046 (canary acx-canary-540a843ce43ab7dcd70c8a72).

One test per behaviour: visible_example, ties, empty, single.
"""

import json

from _harness import call_many

FUNC = 'longest_word'
CASES = json.loads("{\"visible_example\": [[\"a quick fox\"]], \"ties\": [[\"cat dog emu\"], [\"ab cd\"]], \"empty\": [[\"\"], [\"  \"]], \"single\": [[\"word\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"quick\"}], \"ties\": [{\"ok\": \"cat\"}, {\"ok\": \"ab\"}], \"empty\": [{\"ok\": \"\"}, {\"ok\": \"\"}], \"single\": [{\"ok\": \"word\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_ties():
    _check("ties")


def test_empty():
    _check("empty")


def test_single():
    _check("single")
