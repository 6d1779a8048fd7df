# ruff: noqa
"""Hidden grader for py-0110 (canary acx-canary-2fb4c6aacf38129fe9eed81d).

One test per behaviour: visible_example, empty, three, negative.
"""

import json

from _harness import call_many

FUNC = 'matrix_trace'
CASES = json.loads("{\"visible_example\": [[[[1, 2], [3, 4]]]], \"empty\": [[[]]], \"three\": [[[[1, 0, 0], [0, 5, 0], [0, 0, 9]]]], \"negative\": [[[[-1, 2], [3, -4]]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 5}], \"empty\": [{\"ok\": 0}], \"three\": [{\"ok\": 15}], \"negative\": [{\"ok\": -5}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_empty():
    _check("empty")


def test_three():
    _check("three")


def test_negative():
    _check("negative")
