"""Tamper checks of a grade whose hidden tests import the submission into pytest's process (issue 46).

Two independent layers, so that defeating one is not enough (``docs/security.md`` says what each misses):

* ``honeypots`` (host side, this module): besides the real run, in a sandbox of its own and an order drawn at
  random (:func:`acx_oci.sandbox.grader._run_pair`), the grade runs with a few real graded tests changed
  *in place*: each one's first top-level ``assert a ==
  <constant>`` (or ``self.assertEqual(a, <constant>)``) gets a fresh random expected value of the same type.
  Same files, names, lines and selection: nothing in that run tells it from the real one but the value
  itself, so a submission that forges passes forges these too. An honest run fails each one (the real
  assertion held, so the changed one cannot); a run where one passes was made to pass by something other
  than the code under test. (Copies planted beside the real tests could be told from them by comparing the
  two, which a submission can do: it reads the hidden files while pytest imports it.)
* ``guard`` (:mod:`acx_oci.sandbox.guard`, inside the sandbox): a parent process the submission cannot reach
  records the child's true exit and the report's digest after every other process is dead; an audit hook
  and a snapshot of the runner's objects, checked after collection, after each test and at the end,
  record patches of the runner, writes under ``/grader-out`` and a report changed after pytest wrote it.

:func:`findings` turns both into the grade's ``tamper`` list; a non-empty one is never a pass.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import secrets
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from acx_oci import pysource
from acx_oci.model import grading
from acx_oci.sandbox import guard

#: What ran on an in-process grade, as records and credentials name them (``grading.tamperChecks``).
TAMPER_CHECKS = ("honeypots", "runnerIntegrity", "observer")
IN_PROCESS, OUT_OF_PROCESS = grading.IN_PROCESS, grading.OUT_OF_PROCESS
#: Honeypots per grade (fewer when fewer graded tests can carry one).
HONEYPOTS = 3
MAX_RECORD = 8 * 1024 * 1024


class _Case(Protocol):
    @property
    def nodeid(self) -> str: ...
    @property
    def outcome(self) -> str: ...


C = TypeVar("C", bound=_Case)


@dataclass(frozen=True)
class Planted:
    """The hidden files with honeypots in them, and the honeypots' junit node ids (``classname::name``)."""

    files: dict[str, str]
    honeypots: tuple[str, ...]


def _mutated(node: ast.expr) -> str | None:
    """A random value of the constant's type no code would produce by accident, as source; None if none.
    Strings and bytes get six of their own letters or digits inserted at a random place (no tell-tale tail)."""
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    inner = node.operand if isinstance(node, ast.UnaryOp) and negative else node
    if not isinstance(inner, ast.Constant) or isinstance(inner.value, bool):
        return None
    v = inner.value
    if negative and isinstance(v, (int, float)):
        v = -v
    elif negative:
        return None
    if isinstance(v, int):
        return repr(v + (1 if v >= 0 else -1) * (7919 + secrets.randbelow(10**6)))
    if isinstance(v, float):
        return repr(v + 7919.0 + secrets.randbelow(10**6) / 8.0)
    if isinstance(v, str):
        own = [c for c in v if c.isalnum()] or list("etaoinshrdlu")
        at = secrets.randbelow(len(v) + 1)
        return repr(v[:at] + "".join(secrets.choice(own) for _ in range(6)) + v[at:])
    if isinstance(v, bytes):
        mine = [bytes([c]) for c in v if bytes([c]).isalnum()] or [bytes([c]) for c in b"etaoinshrdlu"]
        at = secrets.randbelow(len(v) + 1)
        return repr(v[:at] + b"".join(secrets.choice(mine) for _ in range(6)) + v[at:])
    return None


def _target(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[ast.expr, str] | None:
    """The first top-level assertion of ``fn`` if it is ``assert x == <constant>`` (either side) or
    ``self.assertEqual(x, <constant>)``, and the constant's new value."""
    for stmt in fn.body:
        call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
        if call is not None and isinstance(call.func, ast.Attribute) and call.func.attr.startswith("assert"):
            if call.func.attr in ("assertEqual", "assertEquals") and len(call.args) == 2 and not call.keywords:
                for side in reversed(call.args):
                    new = _mutated(side)
                    if new is not None:
                        return side, new
            return None
        if isinstance(stmt, ast.Assert):
            t = stmt.test
            if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq):
                for side in (t.comparators[0], t.left):
                    new = _mutated(side)
                    if new is not None:
                        return side, new
            return None
    return None


def _skippy(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Marked skip/xfail (a copy of it would not run, or would pass by xfail's rules)."""
    return any(w in ast.unparse(d) for d in fn.decorator_list for w in ("skip", "xfail", "flaky"))


_Fn = ast.FunctionDef | ast.AsyncFunctionDef
_Candidate = tuple[ast.Module | ast.ClassDef, _Fn, tuple[ast.expr, str]]


def _reachable_classes(body: list[ast.stmt]) -> Iterator[ast.ClassDef]:
    """The classes of a module pytest could collect: at module level or nested in one, never in a function."""
    for node in body:
        if isinstance(node, ast.ClassDef):
            yield node
            yield from _reachable_classes(node.body)


def _foreign_names(reachable: list[ast.ClassDef], run: set[str] | None) -> bool:
    """Whether a class whose tests run (those ``run`` names, when the graded ids say; else ``Test*`` and
    ``TestCase``s) is built, itself or through the module's classes it extends, on a class from elsewhere,
    which may bring any test name. A helper no such class extends does not count (attrs' ``class Meta(type)``),
    nor one made inside a test (``class E(Exception)``, ``class A(Generic[T])``): pytest never collects those."""
    by_name: dict[str, list[ast.ClassDef]] = {}
    for n in reachable:
        by_name.setdefault(n.name, []).append(n)
    todo = [n for n in reachable if n.name in run] if run is not None else [
        n for n in reachable if n.name.startswith("Test") or any("TestCase" in ast.unparse(b) for b in n.bases)]
    seen: set[int] = set()
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for b in n.bases:
            name = ast.unparse(b).split(".")[-1]
            if name in by_name:
                todo += by_name[name]
            elif name not in ("TestCase", "object", "IsolatedAsyncioTestCase"):
                return True
    return False


def _candidates(path: str, text: str, graded: set[str] | None) -> list[_Candidate]:
    """(container, function, target) for each graded test of ``path`` that can carry a honeypot."""
    try:
        tree = pysource.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: list[_Candidate] = []
    containers: list[tuple[ast.Module | ast.ClassDef, str]] = [(tree, "")]
    containers += [(n, n.name + "::") for n in tree.body if isinstance(n, ast.ClassDef) and (
        graded is not None or n.name.startswith("Test") or any("TestCase" in ast.unparse(b) for b in n.bases))]
    # a name defined twice anywhere in the module (two classes' test_indexing: more-itertools; a nested class's)
    # is one junit name ``module::name``: the other, unchanged, passes in the honeypot run and reads as a
    # honeypot that passed. A class built on one from elsewhere may bring any name: such a module gets none.
    defs = Counter(f.name for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))
    run = None if graded is None else {c for g in graded if g.startswith(path + "::") for c in g.split("::")[1:-1]}
    if _foreign_names(list(_reachable_classes(tree.body)), run):
        return []
    for box, prefix in containers:
        for fn in box.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.name.startswith("test") or \
                    defs[fn.name] > 1:
                continue
            if (graded is not None and f"{path}::{prefix}{fn.name}" not in graded) or _skippy(fn):
                continue
            target = _target(fn)
            if target is not None:
                out.append((box, fn, target))
    return out


def plant(files: dict[str, str], config: dict[str, Any], n: int = HONEYPOTS) -> Planted:
    """``files`` (hidden tree, ``tests/...`` paths relative to the rootdir's ``tests``) with up to ``n`` graded
    tests changed in place (one expected constant each, on its own line: no line, name or selection moves),
    and those tests' hidden ids: the honeypots of a second run."""
    listed = config.get("tests")
    graded = {str(t) for t in listed} if isinstance(listed, list) else None
    pool = [(p, c) for p in sorted(files) if p.endswith(".py") and p.rsplit("/", 1)[-1].startswith("test")
            for c in _candidates(p, files[p], graded)]
    chosen: list[tuple[str, _Candidate]] = []
    while pool and len(chosen) < n:
        path, cand = pool.pop(secrets.randbelow(len(pool)))
        if cand[2][0].lineno == cand[2][0].end_lineno:
            chosen.append((path, cand))
    out, ids = dict(files), []
    for path in sorted({p for p, _ in chosen}):
        lines = out[path].splitlines(keepends=True)
        here = sorted(((c[2][0], c[2][1], c) for p, c in chosen if p == path),
                      key=lambda t: (t[0].lineno, t[0].col_offset), reverse=True)
        for node, new, (box, fn, _) in here:
            line = lines[node.lineno - 1].encode("utf-8")
            end = node.end_col_offset if node.end_col_offset is not None else len(line)
            lines[node.lineno - 1] = (line[:node.col_offset] + new.encode("utf-8") + line[end:]).decode("utf-8")
            ids.append(f"{path}::{'' if isinstance(box, ast.Module) else box.name + '::'}{fn.name}")
        out[path] = "".join(lines)
    return Planted(out, tuple(sorted(ids)))


def hidden_files(tests: Path) -> dict[str, str]:
    """The hidden test files (UTF-8 text, regular files only), by path relative to ``tests``."""
    files: dict[str, str] = {}
    for dirpath, _, filenames in os.walk(tests, followlinks=False):
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if stat.S_ISREG(os.lstat(p).st_mode):
                files[p.relative_to(tests).as_posix()] = p.read_text("utf-8")
    return files


@dataclass(frozen=True)
class GraderPayload:
    """What the grader sends (the hidden files as they are) and, on an in-process grade, the honeypot run's
    files (a few graded tests changed in place) with those tests' hidden ids."""

    files: dict[str, str]
    honeypots: tuple[str, ...]  # hidden test ids (``tests/test_x.py::test_y``), changed in ``decoy``
    in_process: bool
    relaxations: tuple[str, ...] = ()  # model.grading.RUNNER_IMPORTS_PACKAGE: detection cannot be sound
    decoy: dict[str, str] = field(default_factory=dict)


def prepare(files: dict[str, str], config_name: str, import_submission: bool) -> GraderPayload:
    """Honeypots chosen when the hidden tests import the submission into pytest's process (an imported exam's
    config names its packages under test, or the caller asked for ``import_submission``)."""
    try:
        conf = json.loads(files.get(config_name, "{}"))
    except ValueError:
        conf = {}
    if not isinstance(conf, dict):
        conf = {}
    if not (import_submission or conf.get("packages")):
        return GraderPayload(files, (), False)
    planted = plant(files, conf)
    packages = conf.get("packages")
    relaxed = grading.relaxation_for(map(str, packages)) if isinstance(packages, list) else []
    return GraderPayload(files, planted.honeypots, True, tuple(relaxed), planted.files)


@dataclass(frozen=True)
class TamperAssessment(Generic[C]):
    """The grade as the caller sees it: the real run's cases and pytest's exit for them, the tamper findings of
    both runs and how it was graded (``grading``)."""

    cases: tuple[C, ...]
    returncode: int
    findings: tuple[str, ...]
    grading: dict[str, Any]


@dataclass(frozen=True)
class Run(Generic[C]):
    """One sandbox run of pytest: its output dir, its junit cases, its exit and whether it timed out."""

    out: Path
    cases: Sequence[C]
    returncode: int
    timed_out: bool

    @functools.cached_property
    def forged(self) -> list[str]:
        """What the checks found in this run as the real one (no honeypots): read once, for the decision on
        a second run and for the assessment alike."""
        return _run_findings(self, ())


def needs_decoy(prep: GraderPayload, first: Run[C], *, every_layer: bool = True) -> bool:
    """The honeypot run counts when honeypots were chosen and the real run passed every test (a failing grade
    is no pass whatever a second run says). Not ``every_layer``: only when no forgery was found in the real
    run already (the grade is then tampered whatever a second run says; a game's record names every layer
    that saw it). Both runs are made either way: which one is real must not show."""
    return bool(prep.honeypots and prep.decoy and first.cases and not first.timed_out
                and all(c.outcome == "passed" for c in first.cases)
                and (every_layer or not first.forged))


def _run_findings(run: Run[C], honeypots: tuple[str, ...]) -> list[str]:
    return findings(read_record(run.out), {c.nodeid: c.outcome for c in run.cases}, honeypots, run.returncode,
                    run.timed_out, report_digest(run.out / "report.xml"))


def assess(prep: GraderPayload, first: Run[C], decoy: Run[C] | None,
           to_junit: Callable[[str], str]) -> TamperAssessment[C]:
    """What the tamper checks found in the real run (``first``: the observer's record in its output dir) and
    in the honeypot run (``decoy``, when it ran: a changed test that passed there was forged)."""
    # module::name: a honeypot method is inherited by the test classes below its own, under the same name
    hp = tuple(f"{to_junit(h.split('::')[0] + '::x').split('::')[0]}::{h.split('::')[-1]}" for h in prep.honeypots)
    forged = list(first.forged)
    if decoy is not None:
        forged += [f for f in _run_findings(decoy, hp) if f not in forged]
    checks = TAMPER_CHECKS if hp else TAMPER_CHECKS[1:]
    how: dict[str, Any] = {"mode": IN_PROCESS if prep.in_process else OUT_OF_PROCESS,
                           "tamperChecks": list(checks), "honeypots": len(hp)}
    if prep.relaxations:
        how["relaxations"] = list(prep.relaxations)
    return TamperAssessment(tuple(first.cases), first.returncode, tuple(forged), how)


def record_grading(how: Mapping[str, Any]) -> dict[str, Any]:
    """A grade's ``grading`` as game records carry it: the mode, the tamper checks run, any relaxation."""
    out: dict[str, Any] = {"mode": str(how.get("mode", OUT_OF_PROCESS)),
                           "tamperChecks": list(how.get("tamperChecks", ()))}
    if how.get("relaxations"):
        out["relaxations"] = list(how["relaxations"])
    return out


def read_record(out: Path) -> dict[str, Any] | None:
    """The observer's record from the grader's output dir (a regular file, bounded), or None."""
    path = out / guard.RECORD
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        data = fh.read(MAX_RECORD + 1)
    try:
        rec = json.loads(data) if len(data) <= MAX_RECORD else None
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


def _is_honeypot(nodeid: str, honeypots: Iterable[str]) -> bool:
    """Whether a junit case is a honeypot's (``module::name``, any class of that module, any parameters)."""
    where, _, name = nodeid.split("[", 1)[0].rpartition("::")
    return any(name == h.rpartition("::")[2] and (where == h.rpartition("::")[0]
                                                   or where.startswith(h.rpartition("::")[0] + "."))
               for h in honeypots)


def report_digest(path: Path) -> str | None:
    """The sha256 of the report as the observer computes it (``not a regular file``; None: absent)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return "not a regular file" if os.path.lexists(path) else None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return "not a regular file"
        return hashlib.sha256(fh.read(guard.MAX_REPORT + 1)).hexdigest()


def findings(record: dict[str, Any] | None, outcomes: dict[str, str], honeypots: tuple[str, ...],
             returncode: int, timed_out: bool, report: str | None = None) -> list[str]:
    """Why this grade was tampered with (empty: no check fired). ``outcomes``: junit node id -> outcome,
    honeypots included; ``honeypots``: their junit node ids; ``report``: the host's :func:`report_digest`."""
    out: list[str] = []
    for h in honeypots:
        got = [o for n, o in outcomes.items() if _is_honeypot(n, (h,))]
        if any(o == "passed" for o in got):
            out.append(f"honeypot: a hidden test every honest run fails passed ({h})")
        elif not got and any(o == "passed" for o in outcomes.values()):
            out.append(f"honeypot: a hidden test every honest run fails is missing from the report ({h})")
    if timed_out:
        return out
    if record is None:
        return [*out, "observer: the grader's own record is missing"]
    out += [f"runner: {w}" for w in record.get("tamper") or ()][:5]
    if record.get("flooded"):
        out.append("observer: the test process flooded the grader's event channel")
    end = record.get("end")
    if not isinstance(end, dict):
        if record.get("exit") == 0 or returncode == 0:
            out.append("observer: the test process exited 0 before the grader's end (an early exit)")
        return out
    if end.get("code") != record.get("exit"):
        out.append(f"observer: pytest returned {end.get('code')} but the process exited {record.get('exit')}")
    reports = record.get("reports") or []
    if reports and (reports[-1] != record.get("report") or report != record.get("report")):
        out.append("observer: the junit report changed after pytest wrote it")
    seen = record.get("tests") or {}
    lied = sorted(n for n, o in outcomes.items() if o == "passed" and seen.get(n, "passed") != "passed")
    if lied:
        out.append(f"observer: the report says passed where the runner saw {seen[lied[0]]} ({lied[0]})")
    unseen = sorted(n for n, o in outcomes.items() if o == "passed" and n not in seen)
    if unseen:  # also when the runner ran nothing: collect-only switched on from inside, passes written in
        out.append(f"observer: the report has a passing test the runner never ran ({unseen[0]})")
    return out
