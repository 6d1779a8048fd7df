# ruff: noqa
"""Hidden grader for py-0066 (canary acx-canary-2bab79d0bf45d40b12d44fdc).

One test per behaviour: visible_example, quoted_commas, escaped_quotes, empty_fields.
"""

import json

from _harness import call_many

FUNC = 'parse_csv_line'
CASES = json.loads("{\"visible_example\": [[\"a,b,c\"]], \"quoted_commas\": [[\"x,\\\"y,z\\\",w\"]], \"escaped_quotes\": [[\"\\\"say \\\"\\\"hi\\\"\\\"\\\",ok\"]], \"empty_fields\": [[\"a,,b\"], [\"\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": [\"a\", \"b\", \"c\"]}], \"quoted_commas\": [{\"ok\": [\"x\", \"y,z\", \"w\"]}], \"escaped_quotes\": [{\"ok\": [\"say \\\"hi\\\"\", \"ok\"]}], \"empty_fields\": [{\"ok\": [\"a\", \"\", \"b\"]}, {\"ok\": [\"\"]}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_quoted_commas():
    _check("quoted_commas")


def test_escaped_quotes():
    _check("escaped_quotes")


def test_empty_fields():
    _check("empty_fields")
