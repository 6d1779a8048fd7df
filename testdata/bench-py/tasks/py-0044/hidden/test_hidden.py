# ruff: noqa
"""Hidden grader for py-0044 (canary acx-canary-3728debe1206c151337e648e).

One test per behaviour: visible_example, every_fourth, centuries, every_400th.
"""

import json

from _harness import call_many

FUNC = 'is_leap_year'
CASES = json.loads("{\"visible_example\": [[2024]], \"every_fourth\": [[1996], [2023]], \"centuries\": [[1900], [2100]], \"every_400th\": [[2000], [2400]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"every_fourth\": [{\"ok\": true}, {\"ok\": false}], \"centuries\": [{\"ok\": false}, {\"ok\": false}], \"every_400th\": [{\"ok\": true}, {\"ok\": true}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_every_fourth():
    _check("every_fourth")


def test_centuries():
    _check("centuries")


def test_every_400th():
    _check("every_400th")
