# ruff: noqa
"""Hidden grader for py-0011 (canary acx-canary-147e0975c4ea59a7744b1e21).

One test per behaviour: visible_example, base, small, large.
"""

import json

from _harness import call_many

FUNC = 'fibonacci'
CASES = json.loads("{\"visible_example\": [[10]], \"base\": [[0], [1]], \"small\": [[2], [12]], \"large\": [[90]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 55}], \"base\": [{\"ok\": 0}, {\"ok\": 1}], \"small\": [{\"ok\": 1}, {\"ok\": 144}], \"large\": [{\"ok\": 2880067194370816120}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_base():
    _check("base")


def test_small():
    _check("small")


def test_large():
    _check("large")
