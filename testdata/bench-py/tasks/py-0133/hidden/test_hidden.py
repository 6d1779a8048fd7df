# ruff: noqa
"""Hidden grader for py-0133 (canary acx-canary-bb34d2079119053c7dfe0ab1).

One test per behaviour: visible_example, false_words, digits, padding, unknown.
"""

import json

from _harness import call_many

FUNC = 'parse_bool'
CASES = json.loads("{\"visible_example\": [[\"yes\"]], \"false_words\": [[\"no\"], [\"OFF\"]], \"digits\": [[\"1\"], [\"0\"]], \"padding\": [[\"  True \"]], \"unknown\": [[\"maybe\"], [\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"false_words\": [{\"ok\": false}, {\"ok\": false}], \"digits\": [{\"ok\": true}, {\"ok\": false}], \"padding\": [{\"ok\": true}], \"unknown\": [{\"ok\": null}, {\"ok\": null}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_false_words():
    _check("false_words")


def test_digits():
    _check("digits")


def test_padding():
    _check("padding")


def test_unknown():
    _check("unknown")
