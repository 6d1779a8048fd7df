# ruff: noqa
"""Hidden grader for py-0028 (canary acx-canary-f726d8360350668732b0d013).

One test per behaviour: visible_example, empty, no_common, identical, single, three_strings.
"""

import json

from _harness import call_many

FUNC = 'lcp'
CASES = json.loads("{\"visible_example\": [[[\"flower\", \"flow\"]]], \"empty\": [[[]]], \"no_common\": [[[\"dog\", \"racecar\"]]], \"identical\": [[[\"same\", \"same\"]]], \"single\": [[[\"a\"]]], \"three_strings\": [[[\"flower\", \"flow\", \"flight\"]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"flow\"}], \"empty\": [{\"ok\": \"\"}], \"no_common\": [{\"ok\": \"\"}], \"identical\": [{\"ok\": \"same\"}], \"single\": [{\"ok\": \"a\"}], \"three_strings\": [{\"ok\": \"fl\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_no_common():
    _check("no_common")


def test_identical():
    _check("identical")


def test_single():
    _check("single")


def test_three_strings():
    _check("three_strings")
