# ruff: noqa
"""Hidden grader for py-0131 (canary acx-canary-e3bafa83a624109a5519bf54).

One test per behaviour: visible_example, zero, teens, tens, compound.
"""

import json

from _harness import call_many

FUNC = 'num_to_words'
CASES = json.loads("{\"visible_example\": [[42]], \"zero\": [[0]], \"teens\": [[13], [19]], \"tens\": [[20], [90]], \"compound\": [[21], [99]]}")
EXPECTED = json.loads("{\"visible_example\": [{\"ok\": \"forty-two\"}], \"zero\": [{\"ok\": \"zero\"}], \"teens\": [{\"ok\": \"thirteen\"}, {\"ok\": \"nineteen\"}], \"tens\": [{\"ok\": \"twenty\"}, {\"ok\": \"ninety\"}], \"compound\": [{\"ok\": \"twenty-one\"}, {\"ok\": \"ninety-nine\"}]}")


def _check(behaviour):
    assert call_many(FUNC, CASES[behaviour]) == EXPECTED[behaviour]


def test_visible_example():
    _check("visible_example")


def test_zero():
    _check("zero")


def test_teens():
    _check("teens")


def test_tens():
    _check("tens")


def test_compound():
    _check("compound")
