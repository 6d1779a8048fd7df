# ruff: noqa
"""Hidden grader for py-0043 (canary acx-canary-a248d15a210af940554283d2).

One test per behaviour: visible_example, single_spaces, runs_of_spaces, blank, tabs_and_newlines.
"""

import json

from _harness import call_many

FUNC = 'count_words'
CASES = json.loads("{\"visible_example\": [[\"a b c\"]], \"single_spaces\": [[\"one two three four\"]], \"runs_of_spaces\": [[\"a  b\"], [\" a b \"]], \"blank\": [[\"\"], [\"   \"]], \"tabs_and_newlines\": [[\"a\\tb\\nc\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": 3}], \"single_spaces\": [{\"ok\": 4}], \"runs_of_spaces\": [{\"ok\": 2}, {\"ok\": 2}], \"blank\": [{\"ok\": 0}, {\"ok\": 0}], \"tabs_and_newlines\": [{\"ok\": 3}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_single_spaces():
    _check("single_spaces")


def test_runs_of_spaces():
    _check("runs_of_spaces")


def test_blank():
    _check("blank")


def test_tabs_and_newlines():
    _check("tabs_and_newlines")
