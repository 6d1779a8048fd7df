# ruff: noqa
"""Hidden grader for py-0015 (canary acx-canary-5f68636388985f4f5a9b1f3e)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[\"a b a\"]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": {\"a\": 2, \"b\": 1}}]")
HIDDEN = json.loads("[[\"The cat. the CAT!\"], [\"\"], [\"one, two; two: three three three?\"]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": {\"the\": 2, \"cat\": 2}}, {\"ok\": {}}, {\"ok\": {\"one\": 1, \"two\": 2, \"three\": 3}}]")


def test_visible_example():
    assert call_many('word_count', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('word_count', HIDDEN) == HIDDEN_EXPECTED
