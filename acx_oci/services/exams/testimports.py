"""Test modules that hidden tests import: they go to the grader with them, as support, never graded themselves.

A repository's tests often share helpers through another test module (tenacity's ``tests/test_after.py`` says
``from . import test_tenacity``; others ``from tests.test_utils import make_x``). The hidden tree's own
``tests/__init__.py`` makes ``tests`` the grader's package, so such a module is found only if the grader holds
it: left out, every hidden test fails on the base and the fix alike. Found by reading the hidden files with
:mod:`ast` (nothing runs); relative imports resolve against the importing file's folder, absolute ones from
the tree's root.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from acx_oci import pysource

#: Rounds of following a support module's own imports of further test modules.
MAX_ROUNDS = 4


def _candidates(path: str, text: str) -> set[str]:
    """Repository paths (``a/b.py``) of the modules the file at ``path`` imports (resolvable or not)."""
    try:
        tree = pysource.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return set()
    folder = path.split("/")[:-1]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update("/".join(a.name.split(".")) + ".py" for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level - 1 > len(folder):
                    continue
                base = folder[:len(folder) - (node.level - 1)]
            else:
                base = []
            mod = [*base, *(node.module.split(".") if node.module else [])]
            if mod:
                out.add("/".join(mod) + ".py")
            out.update("/".join([*mod, a.name]) + ".py" for a in node.names if a.name != "*")
    return out


def imported_tests(hidden: dict[str, str], names: Iterable[str], is_test: Callable[[str], bool],
                   read: Callable[[list[str]], dict[str, str]]) -> dict[str, str]:
    """The modules of ``names`` that ``is_test`` takes (by path: a test module, or a helper in a tests folder)
    that the ``hidden`` files import, directly or through each other (bounded), with their text (``read`` of
    paths), and the ``__init__.py`` of every package above them; the hidden files themselves excluded.
    structlog's ``tests/processors/test_processors.py`` says ``from ..additional_frame import additional_frame``:
    without ``tests/additional_frame.py`` every hidden test failed on the base and the fix alike."""
    names = set(names)
    found: dict[str, str] = {}
    todo = dict(hidden)
    for _ in range(MAX_ROUNDS):
        new = sorted({p for path, text in todo.items() for p in _candidates(path, text)
                      if p in names and p not in hidden and p not in found and is_test(p)})
        if not new:
            break
        todo = read(new)
        found.update(todo)
    inits = sorted({init for path in [*hidden, *found] for n in range(1, path.count("/") + 1)
                    if (init := "/".join([*path.split("/")[:n], "__init__.py"])) in names
                    and init not in hidden and init not in found})
    if inits and found:
        found.update(read(inits))
    return found
