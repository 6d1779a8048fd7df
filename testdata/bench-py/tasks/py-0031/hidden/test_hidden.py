# ruff: noqa
"""Hidden grader for py-0031 (canary acx-canary-a7ff03b8c5bb1d910c08da69).

One test per behaviour: visible_example, smallest_first, cycle, empty.
"""

import json

from _harness import call_many

FUNC = 'topo'
CASES = json.loads("{\"visible_example\": [[{\"a\": [\"b\"], \"b\": []}]], \"smallest_first\": [[{\"c\": [\"a\"], \"b\": [\"a\"], \"a\": []}], [{\"b\": [\"a\"], \"c\": [], \"a\": []}]], \"cycle\": [[{\"a\": [\"b\"], \"b\": [\"a\"]}]], \"empty\": [[{}]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [\"a\", \"b\"]}], \"smallest_first\": [{\"ok\": [\"b\", \"c\", \"a\"]}, {\"ok\": [\"b\", \"a\", \"c\"]}], \"cycle\": [{\"ok\": null}], \"empty\": [{\"ok\": []}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_smallest_first():
    _check("smallest_first")


def test_cycle():
    _check("cycle")


def test_empty():
    _check("empty")
