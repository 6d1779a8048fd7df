# ruff: noqa
"""Hidden grader for fx-0002 (canary acx-canary-02dd65a8b2f267052736ab23).

One test per behaviour: visible_example, fizz, buzz, fizzbuzz, plain_number.
"""

import json

from _harness import call_many

FUNC = 'fizzbuzz'
CASES = json.loads("{\"visible_example\": [[3]], \"fizz\": [[9]], \"buzz\": [[5], [10]], \"fizzbuzz\": [[15], [30]], \"plain_number\": [[7]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"Fizz\"}], \"fizz\": [{\"ok\": \"Fizz\"}], \"buzz\": [{\"ok\": \"Buzz\"}, {\"ok\": \"Buzz\"}], \"fizzbuzz\": [{\"ok\": \"FizzBuzz\"}, {\"ok\": \"FizzBuzz\"}], \"plain_number\": [{\"ok\": \"7\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_fizz():
    _check("fizz")


def test_buzz():
    _check("buzz")


def test_fizzbuzz():
    _check("fizzbuzz")


def test_plain_number():
    _check("plain_number")
