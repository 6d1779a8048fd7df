# ruff: noqa
"""Hidden grader for py-0058 (canary acx-canary-6995630fc755a9e8bed239e5).

One test per behaviour: visible_example, square, rectangular, identity.
"""

import json

from _harness import call_many

FUNC = 'matrix_multiply'
CASES = json.loads("{\"visible_example\": [[[[1, 2], [3, 4]], [[2, 0], [0, 2]]]], \"square\": [[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]], \"rectangular\": [[[[1, 2, 3], [4, 5, 6]], [[1], [0], [2]]]], \"identity\": [[[[1, 0], [0, 1]], [[9, 8], [8, 7]]]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [[2, 4], [6, 8]]}], \"square\": [{\"ok\": [[19, 22], [43, 50]]}], \"rectangular\": [{\"ok\": [[7], [16]]}], \"identity\": [{\"ok\": [[9, 8], [8, 7]]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_square():
    _check("square")


def test_rectangular():
    _check("rectangular")


def test_identity():
    _check("identity")
