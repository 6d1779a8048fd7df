# ruff: noqa
"""Hidden grader for py-0059 (canary acx-canary-5d12549af2ad5f8a8d7141df).

One test per behaviour: visible_example, out_of_range, wrong_part_count, leading_zeros, not_digits.
"""

import json

from _harness import call_many

FUNC = 'valid_ipv4'
CASES = json.loads("{\"visible_example\": [[\"192.168.0.1\"]], \"out_of_range\": [[\"256.1.1.1\"]], \"wrong_part_count\": [[\"1.2.3\"], [\"1.2.3.4.5\"]], \"leading_zeros\": [[\"01.2.3.4\"]], \"not_digits\": [[\"a.b.c.d\"], [\"1.2.3.-4\"], [\"1.2.3. 4\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"out_of_range\": [{\"ok\": false}], \"wrong_part_count\": [{\"ok\": false}, {\"ok\": false}], \"leading_zeros\": [{\"ok\": false}], \"not_digits\": [{\"ok\": false}, {\"ok\": false}, {\"ok\": false}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_out_of_range():
    _check("out_of_range")


def test_wrong_part_count():
    _check("wrong_part_count")


def test_leading_zeros():
    _check("leading_zeros")


def test_not_digits():
    _check("not_digits")
