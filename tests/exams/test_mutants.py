"""Mutants of a fix's added code: near misses of the fix, never of the base, each still Python."""

from __future__ import annotations

import ast

from acx_oci.services.exams.mutants import mutants

BASE = "def clamp(x, lo, hi):\n    return x\n\n\ndef sign(x):\n    return 1\n\n\nLIMIT = 10\n"
FIXED = ("def clamp(x, lo, hi):\n    return max(lo, min(hi, x))\n\n\ndef sign(x):\n    if x == 0:\n        return 0\n"
         "    return 1 if x > 0 else -1\n\n\nLIMIT = 10\n")


def test_mutants_touch_only_added_lines_and_span_the_operators() -> None:
    ms = mutants({"calc.py": BASE}, {"calc.py": FIXED}, limit=50)
    assert {m.kind for m in ms} == {"operator", "condition", "constant", "statement"}
    added = {2, 6, 7, 8}  # the lines of FIXED the fix added (1-based)
    fixed_lines = FIXED.splitlines()
    for m in ms:
        assert m.line in added, m
        text = m.overlay["calc.py"]
        ast.parse(text)
        assert text not in (BASE, FIXED)
        changed = [i + 1 for i, (a, b) in enumerate(zip(fixed_lines, text.splitlines(), strict=True)) if a != b]
        assert changed == [m.line], m  # one line, the one named
    assert len({m.overlay["calc.py"] for m in ms}) == len(ms)


def test_a_small_budget_is_spread_round_robin_and_deterministic() -> None:
    first = mutants({"calc.py": BASE}, {"calc.py": FIXED}, limit=4)
    assert [m.kind for m in first] == ["operator", "condition", "constant", "statement"]
    assert first == mutants({"calc.py": BASE}, {"calc.py": FIXED}, limit=4)


def test_non_python_files_docstrings_and_unparseable_fixes_make_no_mutants() -> None:
    assert mutants({"CHANGES.rst": "a\n"}, {"CHANGES.rst": "a\nb = 1 + 2\n"}) == []
    doc = 'def f():\n    """Old words."""\n    return 1\n'
    assert mutants({"m.py": doc}, {"m.py": doc.replace("Old words", "New words here")}) == []
    assert mutants({"m.py": ""}, {"m.py": "def f(:\n    return 1 + 1\n"}) == []
