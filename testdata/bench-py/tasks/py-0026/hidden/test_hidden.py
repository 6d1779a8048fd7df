# ruff: noqa
"""Hidden grader for py-0026 (canary acx-canary-015077205bdbc9a12de8e8fd)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[\"([])\"]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": true}]")
HIDDEN = json.loads("[[\"(]\"], [\"([{}])x\"], [\"((\"], [\"}{\"], [\"\"]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": false}, {\"ok\": true}, {\"ok\": false}, {\"ok\": false}, {\"ok\": true}]")


def test_visible_example():
    assert call_many('balanced', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('balanced', HIDDEN) == HIDDEN_EXPECTED
