# ruff: noqa
"""Hidden grader for py-0077 (canary acx-canary-6167b521714d54b6f9a42b1b).

One test per behaviour: visible_example, keeps_rest, multiple_spaces, empty.
"""

import json

from _harness import call_many

FUNC = 'capitalize_words'
CASES = json.loads("{\"visible_example\": [[\"hello world\"]], \"keeps_rest\": [[\"mcDonald iPhone\"]], \"multiple_spaces\": [[\"a  b\"]], \"empty\": [[\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"Hello World\"}], \"keeps_rest\": [{\"ok\": \"McDonald IPhone\"}], \"multiple_spaces\": [{\"ok\": \"A  B\"}], \"empty\": [{\"ok\": \"\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_keeps_rest():
    _check("keeps_rest")


def test_multiple_spaces():
    _check("multiple_spaces")


def test_empty():
    _check("empty")
