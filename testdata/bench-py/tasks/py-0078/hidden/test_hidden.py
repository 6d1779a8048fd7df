# ruff: noqa
"""Hidden grader for py-0078 (canary acx-canary-79ed7c8b1608da18a3cae0fc).

One test per behaviour: visible_example, consonant, upper, empty.
"""

import json

from _harness import call_many

FUNC = 'starts_with_vowel'
CASES = json.loads("{\"visible_example\": [[\"apple\"]], \"consonant\": [[\"banana\"]], \"upper\": [[\"Orange\"], [\"Umbrella\"]], \"empty\": [[\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"consonant\": [{\"ok\": false}], \"upper\": [{\"ok\": true}, {\"ok\": true}], \"empty\": [{\"ok\": false}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_consonant():
    _check("consonant")


def test_upper():
    _check("upper")


def test_empty():
    _check("empty")
