# ruff: noqa
"""Hidden grader for py-0007 (canary acx-canary-9c17d0a2b091f96f4a0e6617).

One test per behaviour: visible_example, base, small, large.
"""

import json

from _harness import call_many

FUNC = 'factorial'
CASES = json.loads("{\"visible_example\": [[4]], \"base\": [[0], [1]], \"small\": [[5], [10]], \"large\": [[20], [25]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 24}], \"base\": [{\"ok\": 1}, {\"ok\": 1}], \"small\": [{\"ok\": 120}, {\"ok\": 3628800}], \"large\": [{\"ok\": 2432902008176640000}, {\"ok\": 15511210043330985984000000}]}")


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
