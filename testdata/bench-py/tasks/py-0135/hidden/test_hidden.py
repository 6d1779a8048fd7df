# ruff: noqa
"""Hidden grader for py-0135 (canary acx-canary-4431eabeb1b9d72feecede75).

One test per behaviour: visible_example, short, upper, malformed.
"""

import json

from _harness import call_many

FUNC = 'hex_to_rgb'
CASES = json.loads("{\"visible_example\": [[\"#ff8800\"]], \"short\": [[\"#f80\"]], \"upper\": [[\"#FFFFFF\"]], \"malformed\": [[\"ff8800\"], [\"#ggg\"], [\"#12345\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [255, 136, 0]}], \"short\": [{\"ok\": [255, 136, 0]}], \"upper\": [{\"ok\": [255, 255, 255]}], \"malformed\": [{\"ok\": null}, {\"ok\": null}, {\"ok\": null}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_short():
    _check("short")


def test_upper():
    _check("upper")


def test_malformed():
    _check("malformed")
