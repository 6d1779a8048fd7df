# ruff: noqa
"""Hidden grader for py-0129 (canary acx-canary-643e7b5a360858f871781d2c).

One test per behaviour: visible_example, no_at, two_at, dot_edges, empty_local.
"""

import json

from _harness import call_many

FUNC = 'valid_email'
CASES = json.loads("{\"visible_example\": [[\"a@b.co\"]], \"no_at\": [[\"ab.co\"]], \"two_at\": [[\"a@b@c.co\"]], \"dot_edges\": [[\"a@.co\"], [\"a@co.\"]], \"empty_local\": [[\"@b.co\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"no_at\": [{\"ok\": false}], \"two_at\": [{\"ok\": false}], \"dot_edges\": [{\"ok\": false}, {\"ok\": false}], \"empty_local\": [{\"ok\": false}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_no_at():
    _check("no_at")


def test_two_at():
    _check("two_at")


def test_dot_edges():
    _check("dot_edges")


def test_empty_local():
    _check("empty_local")
