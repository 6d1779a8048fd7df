"""Python source parsed one thread at a time.

CPython before 3.11.8/3.12.1 keeps the AST constructor's recursion depth per interpreter, not per thread
(gh-106905): two threads converting trees at once (``exam certify --jobs 2`` derives mutants and reads test
imports in parallel) die with ``SystemError: AST constructor recursion depth mismatch``.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(text: str) -> ast.Module:
    """:func:`ast.parse` under one lock (its errors unchanged)."""
    with _LOCK:
        return ast.parse(text)


