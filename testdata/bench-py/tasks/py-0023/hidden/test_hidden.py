# ruff: noqa
"""Hidden grader for py-0023 (canary acx-canary-72827ece67737364e0beb9e6)."""

import json

from _harness import call_many

VISIBLE = json.loads("[[\"listen\", \"silent\"]]")
VISIBLE_EXPECTED = json.loads("[{\"ok\": true}]")
HIDDEN = json.loads("[[\"Dormitory\", \"dirty room!\"], [\"ab\", \"abb\"], [\"\", \"\"]]")
HIDDEN_EXPECTED = json.loads("[{\"ok\": true}, {\"ok\": false}, {\"ok\": true}]")


def test_visible_example():
    assert call_many('anagrams', VISIBLE) == VISIBLE_EXPECTED


def test_hidden_cases():
    assert call_many('anagrams', HIDDEN) == HIDDEN_EXPECTED
