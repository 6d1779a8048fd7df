# ruff: noqa
"""Hidden grader for py-0057 (canary acx-canary-ff1025c0a9b77ea20e11ac13).

One test per behaviour: visible_example, even_length, odd_length, spaces.
"""

import json

from _harness import call_many

FUNC = 'luhn'
CASES = json.loads("{\"visible_example\": [[\"4539148803436467\"]], \"even_length\": [[\"4539148803436468\"], [\"0000\"]], \"odd_length\": [[\"79927398713\"], [\"79927398710\"]], \"spaces\": [[\"4539 1488 0343 6467\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"even_length\": [{\"ok\": false}, {\"ok\": true}], \"odd_length\": [{\"ok\": true}, {\"ok\": false}], \"spaces\": [{\"ok\": true}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_even_length():
    _check("even_length")


def test_odd_length():
    _check("odd_length")


def test_spaces():
    _check("spaces")
