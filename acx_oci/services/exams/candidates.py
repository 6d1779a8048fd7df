"""Which commits of a repository's history an exam can be made from (``exam candidates``, ``exam harvest``).

The filter is SWE-rebench's, read from its paper: a commit on the first-parent line that is not a merge, or a
pull request's merge commit (read against its first parent); 1 to ``max_files`` (15) files changed; a test
module (``test_*.py``/``*_test.py``) and a non-test Python file both touched; and, ours, the test change adds
a test function or an assertion (a change that adds neither tests nothing new). Options narrow it further:
``fixes_only`` keeps commits whose subject reads like a fix, ``max_source_lines`` caps the source change,
``self_contained`` keeps fixes whose tests import nothing beyond pytest, the standard library and the
repository. Every commit left out is counted by its reason, so a harvest's funnel starts from the history.

Dates are parsed here and handed to git as epoch seconds, commits as the hex ids git printed: no text from
outside reaches git (which runs only through :mod:`gitrepo`, the repository's own config never read).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acx_oci.errors import AcxError, UsageError
from acx_oci.services.exams import gitrepo, importer, testimports

MAX_FILES = 15
MAX_SCANNED = 20000  # commits read from the history at most (a bounded walk of a huge repository)
_HEX = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_PR_MERGE = re.compile(r"^Merge pull request #\d+ ")
FIXLIKE = re.compile(r"\b(fix(e[sd])?|bug|issue|regression|crash|broken|wrong|incorrect)\b|#\d+", re.I)
_TEST_DEF = re.compile(r"^\+\s*(?:async\s+)?def (test_\w+)\s*\(", re.M)
_ASSERT = re.compile(r"^\+\s*(assert\b|self\.assert|with (pytest|self)\.assertRaises|with pytest\.raises)", re.M)
_IMPORT = re.compile(r"^\s*(?:from\s+([A-Za-z_]\w*)[\w.]*\s+import\b|import\s+([A-Za-z_]\w*))", re.M)
_TEST_RUNNERS = frozenset({"pytest", "_pytest", "py"})

# the reasons a commit is left out, in the order they are checked
MERGE = "a merge commit that is not a pull request's"
TOO_MANY_FILES = f"more than {MAX_FILES} files changed"
NO_TESTS = "no test module changed"
NO_SOURCE = "no non-test Python file changed"
DELETES = "it deletes a file outside the tests (an exam overlay cannot delete one)"
NOT_A_FIX = "the subject does not read like a fix (--fixes-only)"
TOO_LONG = "the source change is longer than --max-source-lines"
NO_NEW_TEST = "the test change adds no test and no assertion"
NEEDS_DEPENDENCIES = "its tests import modules beyond pytest, the standard library and the repository"
UNREADABLE = "git could not read it within the tool's bounds (size or time)"
PROGRESS_EVERY = 500
_CONTROL = dict.fromkeys([*range(0x20), 0x7f, *range(0x80, 0xa0)], " ")


def printable(text: str) -> str:
    """Text from a repository as a terminal may show it: control characters (escape sequences, carriage
    returns) become spaces."""
    return text.translate(_CONTROL)


@dataclass(frozen=True)
class Candidate:
    """One commit an exam can be made from: ``exam import --repo R --base PARENT --fix COMMIT``."""

    commit: str
    parent: str
    date: str  # committer date, YYYY-MM-DD (UTC)
    subject: str
    merge: bool
    files: int
    tests: tuple[str, ...]
    sources: tuple[str, ...]
    needs: tuple[str, ...]  # the tests' imports neither pytest, the standard library nor the repository provides

    def json(self) -> dict[str, Any]:
        """The candidate as ``exam candidates --json`` prints it."""
        return {"commit": self.commit, "parent": self.parent, "date": self.date, "subject": self.subject,
                "merge": self.merge, "files": self.files, "tests": list(self.tests), "sources": list(self.sources),
                "needs": list(self.needs)}


@dataclass
class CandidateScan:
    """A walk's result: the candidates (newest first) and how many commits were left out, by reason."""

    candidates: list[Candidate] = field(default_factory=list)
    scanned: int = 0
    left_out: Counter[str] = field(default_factory=Counter)
    capped: bool = False  # the walk stopped at MAX_SCANNED commits, not at the window's end or --max

    def json(self) -> dict[str, Any]:
        """The walk as ``exam candidates --json`` prints it."""
        return {"scanned": self.scanned, "capped": self.capped, "leftOut": dict(sorted(self.left_out.items())),
                "candidates": [c.json() for c in self.candidates]}


def parse_date(value: str, what: str) -> datetime:
    """``YYYY-MM-DD`` or an ISO 8601 time (UTC unless it names an offset); UsageError otherwise."""
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise UsageError(f"{what} {value[:60]!r}: expected a date (YYYY-MM-DD) or an ISO 8601 time") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def scan(repo: Path, *, since: datetime | None = None, until: datetime | None = None, limit: int = 20,
         max_files: int = MAX_FILES, fixes_only: bool = False, max_source_lines: int | None = None,
         self_contained: bool = False, progress: Callable[[str], None] | None = None) -> CandidateScan:
    """The newest ``limit`` candidates of ``repo``'s history between ``since`` and ``until`` (see the module).
    A commit git cannot read within the tool's bounds is left out by that reason; the walk goes on."""
    g = gitrepo.open_repo(repo)
    out = CandidateScan()
    start, end = (int(w.timestamp()) if w else None for w in (since, until))
    if end is not None and end <= 0:
        return out  # nothing was committed before 1970 (git's times are seconds since then)
    window = [f"--max-age={start}"] if start is not None and start > 0 else []
    window += [f"--min-age={end}"] if end is not None else []
    raw = gitrepo.run_git(g, "log", "--no-show-signature", "--no-mailmap", "--first-parent", "--format=%H %P %ct",
                          f"--max-count={MAX_SCANNED + 1}", *window, "HEAD").decode("ascii", "replace")
    lines = raw.splitlines()
    out.capped = len(lines) > MAX_SCANNED
    for line in lines[:MAX_SCANNED]:
        if len(out.candidates) >= limit:
            out.capped = False
            break
        parts = line.split()
        if len(parts) < 3 or not all(_HEX.match(p) for p in parts[:-1]) or not parts[-1].isdigit():
            continue  # a root commit (no parent) has nothing to be a fix of
        out.scanned += 1
        if progress is not None and out.scanned % PROGRESS_EVERY == 0:
            progress(f"exam candidates: {out.scanned} commits read, {len(out.candidates)} candidate(s)")
        try:
            found = _judge(g, parts[0], parts[1], len(parts) > 3, int(parts[-1]), max_files=max_files,
                           fixes_only=fixes_only, max_source_lines=max_source_lines, self_contained=self_contained)
        except AcxError:  # a commit too big (or too slow) to read is no candidate, and stops nothing
            found = UNREADABLE
        if isinstance(found, Candidate):
            out.candidates.append(found)
        else:
            out.left_out[found] += 1
    return out


def _judge(g: gitrepo.Repo, commit: str, parent: str, merge: bool, when: int, *, max_files: int,
           fixes_only: bool, max_source_lines: int | None, self_contained: bool) -> Candidate | str:
    """The commit as a candidate, or the reason it is left out."""
    subject = gitrepo.run_git(g, "log", "-1", "--no-show-signature", "--no-mailmap", "--format=%s", commit,
                              max_bytes=64 * 1024).decode("utf-8", "replace").strip()
    if merge and not _PR_MERGE.match(subject):
        return MERGE
    names = gitrepo.run_git(g, "diff", "--no-ext-diff", "--no-renames", "--name-only", "-z", parent, commit,
                            max_bytes=4 * 1024 * 1024).decode("utf-8", "replace").split("\0")
    paths = [p for p in names if p]
    if len(paths) > max_files or not paths:
        return TOO_MANY_FILES
    # a test file the commit deletes is no hidden test: tests are the ones present at the commit
    present = set(gitrepo.run_git(g, "diff", "--no-ext-diff", "--no-renames", "--name-only", "-z",
                                  "--diff-filter=d", parent, commit, max_bytes=4 * 1024 * 1024)
                  .decode("utf-8", "replace").split("\0"))
    tests = tuple(p for p in paths if p in present and _is_test_module(p))
    sources = tuple(p for p in paths if p.endswith(".py") and not importer.is_test_path(p))
    if not tests:
        return NO_TESTS
    if not sources:
        return NO_SOURCE
    if any(p not in present and not importer.is_test_path(p) for p in paths):  # exam import refuses it
        return DELETES
    if fixes_only and not FIXLIKE.search(subject):
        return NOT_A_FIX
    if max_source_lines is not None and _changed_lines(_diff(g, parent, commit, list(sources))) > max_source_lines:
        return TOO_LONG
    test_diff = _diff(g, parent, commit, list(tests))
    if not _TEST_DEF.search(test_diff) and not _ASSERT.search(test_diff):
        return NO_NEW_TEST
    needs = tuple(foreign_imports(g, commit, list(tests)))
    if self_contained and needs:
        return NEEDS_DEPENDENCIES
    day = datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d")
    return Candidate(commit, parent, day, subject[:200], merge, len(paths), tests, sources, needs)


def _is_test_module(path: str) -> bool:
    return path.endswith(".py") and importer.is_test_path(path) and importer.is_test_name(path.rsplit("/", 1)[-1])


def _diff(g: gitrepo.Repo, parent: str, commit: str, paths: list[str]) -> str:
    return gitrepo.run_git(g, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "-U3", parent, commit, "--",
                           *(f":(literal){p}" for p in paths), max_bytes=8 * 1024 * 1024).decode("utf-8", "replace")


def _changed_lines(diff: str) -> int:
    return sum(1 for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---"))


def _tree_names(g: gitrepo.Repo, commit: str) -> list[str]:
    return gitrepo.run_git(g, "ls-tree", "-r", "-z", "--name-only", commit, max_bytes=32 * 1024 * 1024).decode(
        "utf-8", "replace").split("\0")


def foreign_imports(g: gitrepo.Repo, commit: str, tests: list[str]) -> list[str]:
    """Top-level modules the tests (the ``conftest.py`` files above them, the test modules they import) import
    that neither the standard library, pytest nor the repository provides: what an environment must hold."""
    names = [n for n in _tree_names(g, commit) if n]
    own = {part for n in names if n.endswith(".py") for part in n[:-3].split("/")}

    def read(paths: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for p in paths:
            try:
                found[p] = gitrepo.run_git(g, "cat-file", "blob", f"{commit}:{p}", max_bytes=4 * 1024 * 1024).decode(
                    "utf-8", "replace")
            except AcxError:  # absent (a conftest.py that is not there) or too big: nothing read from it
                continue
        return found

    texts = read(tests)
    texts.update(testimports.imported_tests(texts, names, importer.is_test_path, read))
    for t in tests:
        parts = t.split("/")[:-1]
        texts.update(read(["/".join([*parts[:i], "conftest.py"]) for i in range(len(parts) + 1)]))
    mods = {m.group(1) or m.group(2) for text in texts.values() for m in _IMPORT.finditer(text)}
    return sorted(m for m in mods if m not in sys.stdlib_module_names and m not in _TEST_RUNNERS and m not in own)
