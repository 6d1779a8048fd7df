# ruff: noqa
"""Hidden grader for py-0045 (canary acx-canary-c09deb24b5ad1245bc4cd69e).

One test per behaviour: visible_example, mixed_case, apostrophes, spacing.
"""

import json

from _harness import call_many

FUNC = 'title_case'
CASES = json.loads("{\"visible_example\": [[\"hello world\"]], \"mixed_case\": [[\"hELLO wORLD\"]], \"apostrophes\": [[\"don't stop\"]], \"spacing\": [[\"  a  b \"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"Hello World\"}], \"mixed_case\": [{\"ok\": \"Hello World\"}], \"apostrophes\": [{\"ok\": \"Don't Stop\"}], \"spacing\": [{\"ok\": \"  A  B \"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_mixed_case():
    _check("mixed_case")


def test_apostrophes():
    _check("apostrophes")


def test_spacing():
    _check("spacing")
