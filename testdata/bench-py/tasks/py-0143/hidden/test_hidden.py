# ruff: noqa
"""Hidden grader for py-0143 (canary acx-canary-cbda001d504bde6dc94c3c78).

One test per behaviour: visible_example, two_tills, more_tills, empty.
"""

import json

from _harness import call_many

FUNC = 'queue_time'
CASES = json.loads("{\"visible_example\": [[[5, 3, 4], 1]], \"two_tills\": [[[10, 2, 3, 3], 2]], \"more_tills\": [[[2, 3, 10], 5]], \"empty\": [[[], 1]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 12}], \"two_tills\": [{\"ok\": 10}], \"more_tills\": [{\"ok\": 10}], \"empty\": [{\"ok\": 0}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_two_tills():
    _check("two_tills")


def test_more_tills():
    _check("more_tills")


def test_empty():
    _check("empty")
