"""One name, one thing: a reader who meets a name in acx_oci meets one concept, wherever it is imported from."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "acx_oci"


def _trees() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(), filename=str(p)) for p in sorted(PACKAGE.rglob("*.py"))}


def duplicate_classes(trees: dict[Path, ast.Module]) -> dict[str, list[str]]:
    """Every public class name defined in more than one place, with where."""
    seen: dict[str, list[str]] = defaultdict(list)
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                seen[node.name].append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return {name: where for name, where in seen.items() if len(where) > 1}


def test_no_two_public_classes_share_a_name() -> None:
    dups = duplicate_classes(_trees())
    assert not dups, "public class names defined more than once (rename so each says what it is): " + "; ".join(
        f"{name} at {', '.join(where)}" for name, where in sorted(dups.items()))


def test_the_scan_sees_a_duplicate() -> None:
    planted = {ROOT / "acx_oci/a.py": ast.parse("class Verdict:\n    pass\n"),
               ROOT / "acx_oci/b.py": ast.parse("def f():\n    class Verdict:\n        pass\n"),
               ROOT / "acx_oci/c.py": ast.parse("class _Private:\n    pass\nclass _Private:\n    pass\n")}
    assert duplicate_classes(planted) == {"Verdict": ["acx_oci/a.py:1", "acx_oci/b.py:2"]}
