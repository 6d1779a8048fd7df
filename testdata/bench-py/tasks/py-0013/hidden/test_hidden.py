# ruff: noqa
"""Hidden grader for py-0013 (canary acx-canary-faa417b3d5b59e6b9e89f3bf).

One test per behaviour: visible_example, below_two, two, large, squares.
"""

import json

from _harness import call_many

FUNC = 'is_prime'
CASES = json.loads("{\"visible_example\": [[7]], \"below_two\": [[1], [0], [-7]], \"two\": [[2]], \"large\": [[7919], [7917]], \"squares\": [[49], [121]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": true}], \"below_two\": [{\"ok\": false}, {\"ok\": false}, {\"ok\": false}], \"two\": [{\"ok\": true}], \"large\": [{\"ok\": true}, {\"ok\": false}], \"squares\": [{\"ok\": false}, {\"ok\": false}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_below_two():
    _check("below_two")


def test_two():
    _check("two")


def test_large():
    _check("large")


def test_squares():
    _check("squares")
