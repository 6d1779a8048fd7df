# ruff: noqa
"""Hidden grader for py-0013 (canary acx-canary-faa417b3d5b59e6b9e89f3bf)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[7]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": true}]")
HIDDEN = json.loads("[[1], [2], [0], [-7], [7919], [7917]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": false}, {\"ok\": true}, {\"ok\": false}, {\"ok\": false}, {\"ok\": true}, {\"ok\": false}]")


def test_visible_example():
    assert call_many('is_prime', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('is_prime', HIDDEN) == HIDDEN_EXPECTED
