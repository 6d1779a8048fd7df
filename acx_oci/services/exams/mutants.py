"""Controls without hand work: mutants of the code a fix adds, which the hidden tests must kill.

A real fix rarely comes with a human's near miss. Mutation testing's operators make them from the gold
itself: each mutant changes one token or one statement *on a line the fix added* (so it is a near miss of
the fix, never of the untouched base), still parses as Python, and differs from both the base and the fix.
The operators, in the order mutants are taken round-robin so a small budget still spans them:

- ``operator``: a comparison, arithmetic or boolean operator swapped (``<`` → ``<=``, ``+`` → ``-``,
  ``and`` → ``or``, ``is`` → ``is not``);
- ``constant``: a number moved by one, ``True``/``False`` flipped, ``None`` for a string literal;
- ``condition``: an ``if``/``elif``/``while`` condition negated;
- ``statement``: one added simple statement replaced by ``pass``.

Pure: text in, overlays out. ``exam import`` writes them as ``controls/mutant-NN/`` when no human control is
given; certification grades them (:func:`acx_oci.services.exams.stages.certify_exam`).
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from dataclasses import dataclass

from acx_oci import pysource

MAX_MUTANTS = 8
_SWAP = {"==": "!=", "!=": "==", "<": "<=", "<=": "<", ">": ">=", ">=": ">", "+": "-", "-": "+", "*": "//",
         "//": "*", "/": "*", "%": "//", "+=": "-=", "-=": "+=", "and": "or", "or": "and", "in": "not in",
         "is": "is not", "True": "False", "False": "True"}
_COND = re.compile(r"^(\s*)(if|elif|while)\s+(.+):\s*(#.*)?$")
_KINDS = ("operator", "condition", "constant", "statement")


@dataclass(frozen=True)
class Mutant:
    """One mutant: which file and line it changes, by which operator, and the whole overlay it makes."""

    path: str
    line: int  # 1-based, in the fixed file
    kind: str
    change: str  # "<old> -> <new>", for the record
    overlay: dict[str, str]


def hunks(before: str, after: str) -> list[tuple[int, int, int, int]]:
    """The changed regions of a line diff (``i1, i2, j1, j2`` in before/after lines), in file order."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in
            difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal"]


def _added_lines(before: str, after: str) -> set[int]:
    """0-based indices of the lines of ``after`` that the fix added or changed."""
    return {j for _, _, j1, j2 in hunks(before, after) for j in range(j1, j2)}


def _parses(text: str) -> bool:
    try:
        pysource.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _token_mutants(lines: list[str], added: set[int]) -> list[tuple[int, str, str, str]]:
    """(line index, kind, change, new line) for every token mutation on an added line."""
    out: list[tuple[int, str, str, str]] = []
    try:
        toks = list(tokenize.generate_tokens(io.StringIO("".join(lines)).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return out
    for tok in toks:
        row, col = tok.start
        idx = row - 1
        if idx not in added or tok.start[0] != tok.end[0]:
            continue
        line = lines[idx]
        new: str | None = None
        kind = "operator"
        if tok.type in (tokenize.OP, tokenize.NAME) and tok.string in _SWAP:
            new = _SWAP[tok.string]
            kind = "constant" if tok.string in ("True", "False") else "operator"
        elif tok.type == tokenize.NUMBER and re.fullmatch(r"\d+", tok.string):
            new, kind = str(int(tok.string) + 1 if tok.string == "0" else int(tok.string) - 1), "constant"
        elif tok.type == tokenize.STRING and not tok.string.startswith(('"""', "'''")) and len(tok.string) > 2:
            new, kind = "None", "constant"
        if new is None:
            continue
        mutated = line[:col] + new + line[tok.end[1]:]
        out.append((idx, kind, f"{tok.string} -> {new}", mutated))
    return out


def _line_mutants(lines: list[str], added: set[int]) -> list[tuple[int, str, str, str]]:
    """Negated conditions and one-line simple statements replaced by ``pass``, on added lines (found by the
    AST, so a line inside a string or a bracket is never taken for a statement)."""
    try:
        tree = pysource.parse("".join(lines))
    except (SyntaxError, ValueError):
        return []
    out: list[tuple[int, str, str, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.lineno - 1 not in added or node.lineno != node.end_lineno:
            if isinstance(node, ast.If | ast.While) and node.lineno - 1 in added:
                m = _COND.match(lines[node.lineno - 1].rstrip("\n"))
                if m:
                    out.append((node.lineno - 1, "condition", f"{m.group(2)} {m.group(3)[:40]} -> not",
                                f"{m.group(1)}{m.group(2)} not ({m.group(3)}):\n"))
            continue
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if docstring or isinstance(node, ast.Pass | ast.Global | ast.Nonlocal | ast.Import | ast.ImportFrom):
            continue
        line = lines[node.lineno - 1]
        indent = line[:len(line) - len(line.lstrip())]
        out.append((node.lineno - 1, "statement", f"{line.strip()[:40]} -> pass", f"{indent}pass\n"))
    return sorted(out)


def mutants(parent: dict[str, str], fixed: dict[str, str], limit: int = MAX_MUTANTS) -> list[Mutant]:
    """Up to ``limit`` distinct, parseable mutants of the fix's added Python lines, spread over the operators
    (round-robin by kind, file order within one) — deterministic for the same fix."""
    by_kind: dict[str, list[Mutant]] = {k: [] for k in _KINDS}
    seen: set[str] = set()
    for path in sorted(fixed):
        if not path.endswith(".py"):
            continue
        before, after = parent.get(path, ""), fixed[path]
        lines = after.splitlines(keepends=True)
        added = _added_lines(before, after)
        for idx, kind, change, new_line in _token_mutants(lines, added) + _line_mutants(lines, added):
            text = "".join([*lines[:idx], new_line if new_line.endswith("\n") else new_line + "\n", *lines[idx + 1:]])
            if text in seen or text in (before, after) or not _parses(text):
                continue
            seen.add(text)
            by_kind[kind].append(Mutant(path, idx + 1, kind, change, {**fixed, path: text}))
    out: list[Mutant] = []
    while len(out) < limit and any(by_kind.values()):
        for kind in _KINDS:
            if by_kind[kind] and len(out) < limit:
                out.append(by_kind[kind].pop(0))
    return out
