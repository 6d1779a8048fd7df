"""What of an exam's solution or grader the model could see: the reference's new content, and grader files.

The leak check (issue 37) looks for the solution, not for shared context: what the fix adds that the base did
not already say. Used by the gold stage (``referenceNotLeaked``, ``graderHidden``) and the publication scan.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from acx_oci.model import exam as mx
from acx_oci.services.exams.source import ExamSource


def reference_new(src: ExamSource, *, code: bool = False) -> dict[bytes, int]:
    """The windows of what the reference adds that the base did not already have (issue 37).

    Per changed file, what the fix adds that the file did not say (a line edited in place adds only its new
    words). Then, for an exam whose workspace is still its repository's base tree as imported (its digest is
    ``source.json``'s ``baseTreeDigest``), a run the workspace already holds anywhere is context (upstream had
    it: ``raise ValueError('n must be at least 0')`` copied from a sibling function), as is a run upstream's
    own prompt holds: a SWE-bench instance's issue text, or the fix's commit message when it is the prompt.
    A workspace edited since (or made by hand) has no such pass: every file of it is scanned, strictly.
    """
    runs: list[str] = []
    for path, text in sorted(src.reference.items()):
        before = src.workspace.get(path, "")
        if code:  # the fix's code only: its comments and docstrings are prose, no solution
            before, text = mx.code_only(path, before), mx.code_only(path, text)
        runs += mx.new_content(before, text)
    public: dict[str, str] = {}
    source = src.source or {}
    if as_imported(src):
        public.update(src.workspace)
    if source.get("kind") == "swebench" or source.get("promptFrom") == "fixCommitMessage":
        public["prompt.md"] = src.prompt
    if public:
        context = mx.held(mx.windows(runs), public)
        runs = [r for n, r in enumerate(runs) if n not in context]
    return mx.windows(runs)


#: A run of the fix's new code this long (in windows: some 95 bytes of tokens, two or three lines) is a solution
#: on its own in a grader file; a shorter one counts only with the rest of the fix's new code.
ALONE = 64


def grader_leaks(src: ExamSource, grader: dict[str, str]) -> list[dict[str, Any]]:
    """The publication scan's findings for grader files: the fix's new code in tests that are published.

    Upstream's tests name the API the fix adds: attrs 112dd1d498's test imports ``from attr._make import
    ClassProps`` and writes ``hashability=ClassProps.Hashability.UNHASHABLE``, what the fix's one-line alias
    ``Hashability = ClassProps.Hashability`` says too, and the exam was refused as publishing its solution. A
    grader file leaks when it holds most of one long run (a function body) or most of the fix's new code in
    all (a small fix, such as a one-line ``return``, quoted whole by its test)."""
    wins = reference_new(src, code=True)
    size = Counter(wins.values())
    found = mx.leaks({w: n for w, n in wins.items() if size[n] >= ALONE}, grader)
    named = {f["file"] for f in found}
    whole = mx.leaks(dict.fromkeys(wins, 0), {p: t for p, t in grader.items() if p not in named})
    return found + whole


def as_imported(src: ExamSource) -> bool:
    """The workspace is still its repository's base tree as imported (``source.json``'s ``baseTreeDigest``)."""
    digest = (src.source or {}).get("baseTreeDigest")
    return bool(digest) and digest == src.tree_hash()


def grader_visible(src: ExamSource) -> list[str]:
    """Why the grader is visible in the model-facing tree (empty: it is not)."""
    grader = src.grader_files()
    # The tests' own conftest.py, helpers and data (exam import) are upstream's, and the workspace keeps them as
    # the base has them: the grader's marked copies differ (its data files are the same), and their names are
    # not the hidden tests'.
    support = set((src.source or {}).get("graderSupport") or ())
    contents = {t for p, t in grader.items() if t.strip() and p not in support}
    names = {p.rsplit("/", 1)[-1] for p in src.hidden if p not in support}
    out = []
    for path, text in src.model_facing().items():
        if text in contents:
            out.append(f"{path}: a copy of a grader file")
        elif path.rsplit("/", 1)[-1] in names:
            out.append(f"{path}: named like a hidden test file")
        if mx.find_canaries(text):
            out.append(f"{path}: carries a canary marker")
    return out
