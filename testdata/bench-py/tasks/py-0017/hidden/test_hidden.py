# ruff: noqa
"""Hidden grader for py-0017 (canary acx-canary-45274d3178b0fef2bd187924).

One test per behaviour: visible_example, small, forties, hundreds, years.
"""

import json

from _harness import call_many

FUNC = 'int_to_roman'
CASES = json.loads("{\"visible_example\": [[14]], \"small\": [[4], [9]], \"forties\": [[49], [40]], \"hundreds\": [[400], [900]], \"years\": [[1994], [3999]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"XIV\"}], \"small\": [{\"ok\": \"IV\"}, {\"ok\": \"IX\"}], \"forties\": [{\"ok\": \"XLIX\"}, {\"ok\": \"XL\"}], \"hundreds\": [{\"ok\": \"CD\"}, {\"ok\": \"CM\"}], \"years\": [{\"ok\": \"MCMXCIV\"}, {\"ok\": \"MMMCMXCIX\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_small():
    _check("small")


def test_forties():
    _check("forties")


def test_hundreds():
    _check("hundreds")


def test_years():
    _check("years")
