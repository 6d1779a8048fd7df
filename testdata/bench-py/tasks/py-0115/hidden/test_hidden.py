# ruff: noqa
"""Hidden grader for py-0115 (canary acx-canary-98f4cc2fed0cab3d48d23ee0).

One test per behaviour: visible_example, long_word, exact, empty.
"""

import json

from _harness import call_many

FUNC = 'wrap_text'
CASES = json.loads("{\"visible_example\": [[\"the quick brown fox\", 10]], \"long_word\": [[\"a supercalifragilistic b\", 5]], \"exact\": [[\"ab cd\", 5]], \"empty\": [[\"\", 3]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [\"the quick\", \"brown fox\"]}], \"long_word\": [{\"ok\": [\"a\", \"supercalifragilistic\", \"b\"]}], \"exact\": [{\"ok\": [\"ab cd\"]}], \"empty\": [{\"ok\": []}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_long_word():
    _check("long_word")


def test_exact():
    _check("exact")


def test_empty():
    _check("empty")
