# ruff: noqa
"""Hidden grader for py-0104 (canary acx-canary-07c7c3c6f2d1b59b8b06fc94).

One test per behaviour: visible_example, zero, fraction, negative.
"""

import json

from _harness import call_many

FUNC = 'safe_divide'
CASES = json.loads("{\"visible_example\": [[6, 3]], \"zero\": [[1, 0], [0, 0]], \"fraction\": [[1, 4]], \"negative\": [[-9, 3]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 2.0}], \"zero\": [{\"ok\": null}, {\"ok\": null}], \"fraction\": [{\"ok\": 0.25}], \"negative\": [{\"ok\": -3.0}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_zero():
    _check("zero")


def test_fraction():
    _check("fraction")


def test_negative():
    _check("negative")
