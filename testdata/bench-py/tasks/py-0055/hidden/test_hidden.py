# ruff: noqa
"""Hidden grader for py-0055 (canary acx-canary-7ef61e546d4040bac16c2dfe).

One test per behaviour: visible_example, prime, square_free, powers, one.
"""

import json

from _harness import call_many

FUNC = 'prime_factors'
CASES = json.loads("{\"visible_example\": [[12]], \"prime\": [[13], [97]], \"square_free\": [[30], [26]], \"powers\": [[8], [72]], \"one\": [[1]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [2, 2, 3]}], \"prime\": [{\"ok\": [13]}, {\"ok\": [97]}], \"square_free\": [{\"ok\": [2, 3, 5]}, {\"ok\": [2, 13]}], \"powers\": [{\"ok\": [2, 2, 2]}, {\"ok\": [2, 2, 2, 3, 3]}], \"one\": [{\"ok\": []}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_prime():
    _check("prime")


def test_square_free():
    _check("square_free")


def test_powers():
    _check("powers")


def test_one():
    _check("one")
