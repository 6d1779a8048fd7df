# ruff: noqa
"""Hidden grader for py-0062 (canary acx-canary-6c469e871a4cd3be061e35b9).

One test per behaviour: visible_example, repeated_slashes, parent, above_root, leading_double_slash.
"""

import json

from _harness import call_many

FUNC = 'normalize_path'
CASES = json.loads("{\"visible_example\": [[\"/a/./b/\"]], \"repeated_slashes\": [[\"/a//b///c\"]], \"parent\": [[\"/a/b/../c\"]], \"above_root\": [[\"/a/../../b\"], [\"/..\"]], \"leading_double_slash\": [[\"//a/b\"]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"/a/b\"}], \"repeated_slashes\": [{\"ok\": \"/a/b/c\"}], \"parent\": [{\"ok\": \"/a/c\"}], \"above_root\": [{\"ok\": \"/b\"}, {\"ok\": \"/\"}], \"leading_double_slash\": [{\"ok\": \"/a/b\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_repeated_slashes():
    _check("repeated_slashes")


def test_parent():
    _check("parent")


def test_above_root():
    _check("above_root")


def test_leading_double_slash():
    _check("leading_double_slash")
