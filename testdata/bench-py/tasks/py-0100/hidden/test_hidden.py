# ruff: noqa
"""Hidden grader for py-0100 (canary acx-canary-11767c677a93cc62adf6c8b3).

One test per behaviour: visible_example, sunday, wraps, negative.
"""

import json

from _harness import call_many

FUNC = 'weekday_name'
CASES = json.loads("{\"visible_example\": [[0]], \"sunday\": [[6]], \"wraps\": [[7], [15]], \"negative\": [[-1]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"Monday\"}], \"sunday\": [{\"ok\": \"Sunday\"}], \"wraps\": [{\"ok\": \"Monday\"}, {\"ok\": \"Tuesday\"}], \"negative\": [{\"ok\": \"Sunday\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_sunday():
    _check("sunday")


def test_wraps():
    _check("wraps")


def test_negative():
    _check("negative")
