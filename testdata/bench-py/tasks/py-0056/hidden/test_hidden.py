# ruff: noqa
"""Hidden grader for py-0056 (canary acx-canary-407393fe8f0034959c66f815).

One test per behaviour: visible_example, hex, zero, negative.
"""

import json

from _harness import call_many

FUNC = 'to_base'
CASES = json.loads("{\"visible_example\": [[5, 2]], \"hex\": [[255, 16], [35, 36]], \"zero\": [[0, 7]], \"negative\": [[-10, 3]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"101\"}], \"hex\": [{\"ok\": \"ff\"}, {\"ok\": \"z\"}], \"zero\": [{\"ok\": \"0\"}], \"negative\": [{\"ok\": \"-101\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_hex():
    _check("hex")


def test_zero():
    _check("zero")


def test_negative():
    _check("negative")
