# ruff: noqa
"""Hidden grader for py-0134 (canary acx-canary-0e9e9efdedba6077138d40bc).

One test per behaviour: visible_example, equal_padding, greater, less.
"""

import json

from _harness import call_many

FUNC = 'version_compare'
CASES = json.loads("{\"visible_example\": [[\"1.2\", \"1.10\"]], \"equal_padding\": [[\"1.0\", \"1\"], [\"2.0.0\", \"2\"]], \"greater\": [[\"1.10\", \"1.9\"]], \"less\": [[\"0.9.9\", \"1.0\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": -1}], \"equal_padding\": [{\"ok\": 0}, {\"ok\": 0}], \"greater\": [{\"ok\": 1}], \"less\": [{\"ok\": -1}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_equal_padding():
    _check("equal_padding")


def test_greater():
    _check("greater")


def test_less():
    _check("less")
