# ruff: noqa
"""Hidden grader for py-0031 (canary acx-canary-a7ff03b8c5bb1d910c08da69)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[{\"a\": [\"b\"], \"b\": []}]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": [\"a\", \"b\"]}]")
HIDDEN = json.loads("[[{\"c\": [\"a\"], \"b\": [\"a\"], \"a\": []}], [{\"a\": [\"b\"], \"b\": [\"a\"]}], [{}]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": [\"b\", \"c\", \"a\"]}, {\"ok\": null}, {\"ok\": []}]")


def test_visible_example():
    assert call_many('topo', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('topo', HIDDEN) == HIDDEN_EXPECTED
