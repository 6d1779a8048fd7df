# ruff: noqa
"""Hidden grader for py-0048 (canary acx-canary-845e6720018cf668f180fef5).

One test per behaviour: visible_example, zero, single_digit, several_passes.
"""

import json

from _harness import call_many

FUNC = 'digital_root'
CASES = json.loads("{\"visible_example\": [[123]], \"zero\": [[0]], \"single_digit\": [[7]], \"several_passes\": [[38], [99999999]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 6}], \"zero\": [{\"ok\": 0}], \"single_digit\": [{\"ok\": 7}], \"several_passes\": [{\"ok\": 2}, {\"ok\": 9}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_zero():
    _check("zero")


def test_single_digit():
    _check("single_digit")


def test_several_passes():
    _check("several_passes")
