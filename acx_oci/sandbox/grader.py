"""Grade a submitted tree with hidden pytest files in a separate sandbox; the submission is data, not configuration.

Layout inside the grading sandbox (all host sources are fresh copies in a staging dir)::

    /workspace          read-only copy of the submission
    /grader             read-only: pytest.ini (empty, ours)
    /grader-out         writable, owned by the sandbox uid: junit XML the host reads back
    /tmp/acx-grader     tests/ (the hidden files), written by pytest's process from stdin, gone after collection
                        (out of process; in process the package under test ran while they were imported)

pytest is Debian's or the environment image's venv's (``python -I -B``, :mod:`~acx_oci.sandbox.graderboot`'s
boot, then ``pytest.main``), run from ``/grader`` with pytest's own plugin autoload off (the boot loads the
environment's plugins before any submission path is on ``sys.path``), ``--noconftest``, ``-p no:cacheprovider``,
``-c /grader/pytest.ini`` and ``--rootdir=/tmp/acx-grader``: no file in the submission (conftest.py, pytest.ini,
tox.ini, setup.cfg, pyproject.toml, sitecustomize.py, usercustomize.py, ``.pth``) is ever read as configuration,
because /workspace is neither the rootdir, nor on ``sys.path``, nor a site directory, and ``-I`` ignores PYTHON*
variables and the user site. The repository's own settings come from its base tree, read at import.

By default the hidden tests reach the submission through ``ACX_SUBMISSION``/``ACX_PYTHON`` (the bench-py
``_harness.call_many`` runs it in a child ``python3 -I`` with cwd /workspace), so submission code never runs
inside the pytest process. ``import_submission=True`` appends /workspace to the *end* of pytest's ``sys.path``
(stdlib and pytest still win) for tests that ``import solution`` directly; that is weaker: the submission's code
then runs inside the pytest process and could patch it or read the tests from its memory. Either way the
submission runs as the same sandbox uid as pytest, so a hostile one could race /grader-out; callers must
cross-check the exit code with the report (:attr:`GradeResult.passed` does). The hidden tests (expected values)
are kept from a submission run in a child process: they are never a file in a bind, their copy in the sandbox's
/tmp is deleted once pytest has imported them (before any test runs), and pytest's process is non-dumpable, so
the same-uid submission cannot ptrace it or read its memory or fds. Hidden tests must therefore not read their
own files (data fixtures, lazy imports) while they run. In process (an imported exam) they stay: the package
under test ran while pytest imported them, so removing them would hide nothing, and a test's spawned child
re-imports its test module by name.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from acx_oci import reasons, safetree
from acx_oci.model import CERTIFIED_PASS, INVALID, LANE_ERROR, MODEL_FAIL
from acx_oci.sandbox import tamper
from acx_oci.sandbox.bwrap import SandboxResult, SandboxSpec, give_to_sandbox, run, staging_dir
from acx_oci.sandbox.failures import failed_at
from acx_oci.sandbox.graderboot import GRADER_CONFIG, NO_RUNNER_EXIT, SHADOWED_EXIT, UNIMPORTABLE_EXIT, pytest_argv
from acx_oci.sandbox.tree import tree_digest
from acx_oci.sandbox.uids import own_uid

MAX_REPORT = 4 * 1024 * 1024
PYTHON = "/usr/bin/python3"
#: An environment image's venv (``env build --spec``): when the image has one, its Python and pytest grade.
VENV_PYTHON = "/opt/acx-venv/bin/python"
_DROP_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE")


@dataclass(frozen=True)
class TestOutcome:
    """One test case from the junit report: ``nodeid`` is ``classname::name``."""

    __test__ = False  # not a pytest test class
    nodeid: str
    outcome: str  # passed | failed | error | skipped | xfailed (an xfail that failed, as upstream asks)
    where: str = ""  # a failure's place: the hidden test's line it failed at and the exception (:func:`failed_at`)


@dataclass(frozen=True)
class GradeResult:
    """pytest's exit code, the per-test outcomes and whether the report is consistent with that exit code."""

    returncode: int
    timed_out: bool
    tests: tuple[TestOutcome, ...]
    report_ok: bool
    stdout: bytes
    stderr: bytes
    wall_seconds: float
    graded_digest: str = ""  # tree digest of the copy the grader saw, taken after grading
    #: Why the tamper checks say this grade was forged (:func:`acx_oci.sandbox.tamper.findings`): never a pass.
    tamper: tuple[str, ...] = ()
    #: How the grade was taken (``mode``: in-process when the hidden tests import the submission; the
    #: ``tamperChecks`` that ran; ``honeypots``: tests of the second run), as game and certification records say it.
    grading: Mapping[str, Any] = field(default_factory=dict)

    def outcomes(self) -> dict[str, str]:
        """Outcome per junit node id (a case reported twice keeps its worst: an error at teardown)."""
        out: dict[str, str] = {}
        for t in self.tests:
            if out.get(t.nodeid) not in ("failed", "error"):
                out[t.nodeid] = t.outcome
        return out

    def failing(self) -> frozenset[str]:
        """Node ids that failed or errored, to compare failing sets across runs."""
        return frozenset(t.nodeid for t in self.tests if t.outcome in ("failed", "error"))

    def outcome(self, test_id: str) -> str | None:
        """The outcome of a hidden test id (``path/test_x.py::Cls::test``): its case's, or, for an id without
        parameters, ``passed`` when every parametrized case of it passed, else the first other; None if absent."""
        want = junit_nodeid(test_id)
        cases = [t.outcome for t in self.tests if t.nodeid == want or t.nodeid.split("[", 1)[0] == want]
        return None if not cases else "passed" if all(c in _GREEN for c in cases) else next(
            c for c in cases if c not in _GREEN)

    def counts(self) -> dict[str, int]:
        """Tests per outcome (passed, failed, error, skipped; xfailed when any), the zeros included."""
        out = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        for t in self.tests:
            out[t.outcome] = out.get(t.outcome, 0) + 1
        return out

    def how(self) -> dict[str, Any]:
        """``grading`` as game records and credentials carry it: the mode and the tamper checks that ran."""
        return tamper.record_grading(self.grading)

    @property
    def shadowed(self) -> bool:
        """The grader found the package under test imported from elsewhere than the submission (a lane error)."""
        return self.returncode == SHADOWED_EXIT and not self.tests

    @property
    def unimportable(self) -> bool:
        """The submission's package under test could not be imported, so the hidden conftest.py could not load."""
        return self.returncode == UNIMPORTABLE_EXIT and not self.tests

    @property
    def package_before_runner(self) -> bool:
        """pytest or a plugin imports the package under test: the boot gave them the submission's from the start
        (its own line on stderr; a relaxation a certification names: the submission runs before pytest)."""
        return b"\ngrader: the package under test is the submission's from the start: " in b"\n" + self.stderr[:4096]

    @property
    def no_runner(self) -> bool:
        """pytest (or one of the environment's plugins) could not even be imported: no test ran."""
        return self.returncode == NO_RUNNER_EXIT and not self.tests

    def harness_broken(self) -> str | None:
        """Why this run of upstream's own code (the base, the fix, a control, a mutant) proves nothing about it,
        or None: the runner could not start, nothing was collected, or the report contradicts pytest's exit
        status. Such a run is the harness's lane error, never "the base fails" or "a mutant is killed"."""
        if self.timed_out or self.shadowed or self.unimportable or self.returncode < 0:
            return None
        if self.no_runner:
            return "the test runner cannot start: " + _grader_line(self.stderr, "the test runner cannot start: ")
        if self.returncode == 5 or (self.returncode in (0, 1, 2) and not self.tests):  # 2: interrupted at collection
            said = _last_words(self.stdout) or _last_words(self.stderr) or "no output"
            return f"the grader collected no test (pytest exit {self.returncode}): {said}"
        if self.returncode in (0, 1) and not self.report_ok:
            bad = len(self.failing())
            if _consistent(self.returncode, self.tests):  # the outcomes agree with the exit: a count does not
                summary = summary_total(self.stdout)
                return (f"the report's test count does not add up: {len(self.tests)} test cases, and pytest's "
                        f"summary {'counts ' + str(summary) if summary is not None else 'line was not found'}")
            return (f"the report contradicts pytest's exit status (exit {self.returncode}, {bad} of "
                    f"{len(self.tests)} tests failed or errored in the report)")
        return None

    @property
    def passed(self) -> bool:
        """Exit 0, not timed out, a parsable report with at least one test and every test passed (an xfail
        that fails is what upstream asks of it: it does not keep a run from passing)."""
        return (self.returncode == 0 and not self.timed_out and self.report_ok and bool(self.tests)
                and all(t.outcome in _GREEN for t in self.tests) and any(t.outcome == "passed" for t in self.tests)
                and not self.tamper)


#: Outcomes a passing run may hold: passed, and an upstream ``xfail`` that failed as it is marked to.
_GREEN = ("passed", "xfailed")


def _grader_line(stderr: bytes, prefix: str) -> str:
    """The rest of the boot's own line that starts with ``prefix`` (bounded), else stderr's last line."""
    text = stderr[-8192:].decode("utf-8", "replace")
    hit = next((ln for ln in text.splitlines() if ln.startswith("grader: " + prefix)), None)
    lines = text.strip().splitlines()
    return (hit[len("grader: " + prefix):] if hit else lines[-1] if lines else "no output")[:300]


def _last_words(stdout: bytes) -> str:
    """pytest's first error line, else its last line (bounded): why nothing was collected, for the record."""
    lines = [ln.strip() for ln in stdout[-8192:].decode("utf-8", "replace").splitlines()
             if ln.strip(" =-_") and not ln.startswith("grader: the package under test is the submission's")]
    error = next((ln for ln in lines if ln.startswith(("E ", "ERROR", "INTERNALERROR"))), None)
    return (error or (lines[-1] if lines else ""))[:300]


def copy_tree(src: Path, dst: Path) -> None:
    """Copy regular files, dirs and symlinks (not followed) with sandbox-readable modes; skip FIFOs/devices.

    Skipping changes the tree's hash, which the caller's submitted-vs-graded check then reports.
    """
    dst.mkdir(mode=0o755)
    dst.chmod(0o755)
    src_fd, dst_fd = safetree.open_root(src), safetree.open_root(dst)
    try:  # descriptors on both sides: nothing the agent left (a link where a directory was) is followed
        for e in safetree.walk(src_fd, what="submission"):
            parent_parts = e.rel.split("/")[:-1]
            with safetree.dir_at(dst_fd, parent_parts) as out:
                assert out is not None
                if e.is_link:
                    os.symlink(os.readlink(e.name, dir_fd=e.parent_fd), e.name, dir_fd=out)
                elif e.is_dir:
                    os.mkdir(e.name, 0o755, dir_fd=out)
                    os.chmod(e.name, 0o755, dir_fd=out)
                elif e.is_file:
                    fd = os.open(e.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                 0o600, dir_fd=out)
                    with os.fdopen(safetree.open_file_at(e.parent_fd, e.name, e.rel), "rb") as fi, \
                            os.fdopen(fd, "wb") as fh:
                        shutil.copyfileobj(fi, fh, 1 << 20)
                        os.fchmod(fh.fileno(), 0o755 if e.st.st_mode & 0o111 else 0o644)
    finally:
        os.close(src_fd)
        os.close(dst_fd)


#: pytest 9 counts unittest subtests in the junit report's ``tests`` without a testcase of their own (a failing
#: one fails its test's testcase); its summary line counts them too ("3 failed, 2 passed", "67 subtests passed").
_SUMMARY = re.compile(rb"(?m)^[=\s]*((?:\d+ [\w ]+?, )*\d+ [\w ]+?) in [\d.]+s\b")
_COUNTED = re.compile(rb"(\d+) (?:subtests? )?(?:passed|failed|errors?|skipped|xfailed|xpassed)\b")


def summary_total(stdout: bytes) -> int | None:
    """The tests and subtests pytest's last summary line counts (warnings and deselected left out), or None."""
    lines = _SUMMARY.findall(stdout[-4096:])
    return sum(int(n) for n in _COUNTED.findall(lines[-1])) if lines else None


def parse_junit(path: Path, summary: int | None = None) -> tuple[tuple[TestOutcome, ...], bool]:
    """Per-test outcomes and whether the report is well formed (its ``tests`` count matches its testcases, or
    exceeds them by subtests and equals pytest's ``summary`` total); bounded at :data:`MAX_REPORT` bytes."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_REPORT + 1)
    except OSError:
        return (), False
    if len(data) > MAX_REPORT:
        return (), False
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return (), False
    out: list[TestOutcome] = []
    for case in root.iter("testcase"):
        nodeid = f"{case.get('classname', '')}::{case.get('name', '')}"
        kinds = {child.tag: child for child in case}
        xfail = "skipped" in kinds and kinds["skipped"].get("type") == "pytest.xfail"
        outcome = ("error" if "error" in kinds else "failed" if "failure" in kinds else "xfailed" if xfail
                   else "skipped" if "skipped" in kinds else "passed")
        bad = case.find("error" if outcome == "error" else "failure")
        out.append(TestOutcome(nodeid, outcome, failed_at(bad.text or "") if bad is not None else ""))
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    try:
        declared = sum(int(s.get("tests", "-1")) for s in suites)
    except ValueError:
        return tuple(out), False
    return tuple(out), bool(suites) and (declared == len(out) or (declared > len(out) and declared == summary))


def junit_nodeid(test_id: str) -> str:
    """The :class:`TestOutcome` node id the junit report gives a hidden test id (``path/test_x.py::Cls::test``,
    relative to the hidden tree): the hidden tree is ``tests/`` under the rootdir, dots for slashes."""
    path, _, rest = test_id.partition("::")
    names = [f"tests.{path[:-3] if path.endswith('.py') else path}".replace("/", "."), *rest.split("::")]
    return f"{'.'.join(names[:-1])}::{names[-1]}"


def grader_python(rootfs: Path | None) -> str:
    """The image's venv Python when it has one (its pytest and packages, never the host's), else python3."""
    return VENV_PYTHON if rootfs is not None and os.path.lexists(rootfs / VENV_PYTHON.lstrip("/")) else PYTHON


def grade(submission: Path, tests: Path, *, spec: SandboxSpec | None = None, time_seconds: float | None = None,
          env: Mapping[str, str] | None = None, import_submission: bool = False,
          every_layer: bool = True) -> GradeResult:
    """Run the hidden ``tests`` against a read-only copy of ``submission`` in its own sandbox.

    ``spec`` supplies limits and the root (``spec.rootfs``: an environment image, whose own python3 and pytest
    then grade; else the host's); its binds are not used: the grader sees only its three directories;
    ``env`` adds variables for the tests; not ``every_layer``: no honeypot run after a real run already found
    forged (:func:`tamper.needs_decoy`). Raises only if the sandbox cannot start.
    """
    # its own host uid, so a process budget of its own (bwrap.own_uid); its rw bind is made and given below
    with own_uid(spec or SandboxSpec(), binds_given_after=True) as base:
        return _grade(submission, tests, base, time_seconds, env, import_submission, every_layer)


def _grade(submission: Path, tests: Path, base: SandboxSpec, time_seconds: float | None,
           env: Mapping[str, str] | None, import_submission: bool, every_layer: bool) -> GradeResult:
    stage = staging_dir("acx-grade-")
    try:
        copy_tree(submission, stage / "workspace")
        (stage / "grader").mkdir(mode=0o755)
        (stage / "grader" / "pytest.ini").write_text("[pytest]\n", "utf-8")
        (stage / "grader" / "pytest.ini").chmod(0o644)
        genv = {**{k: v for k, v in base.env.items() if k not in _DROP_ENV}, **(env or {})}
        python = grader_python(base.rootfs)
        genv.update({"ACX_SUBMISSION": "/workspace", "ACX_PYTHON": python, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                     "PYTHONDONTWRITEBYTECODE": "1", "HOME": "/tmp"})
        prep = tamper.prepare(tamper.hidden_files(tests), GRADER_CONFIG, import_submission)
        gspec = replace(base, ro_binds=((stage / "workspace", "/workspace"), (stage / "grader", "/grader")), env=genv,
                        chdir="/grader")
        argv = pytest_argv(import_submission=import_submission, python=python)
        if prep.honeypots and prep.decoy:  # the honeypot run (a few expected values changed in place) beside it
            first, res, ok, pair = _run_pair(gspec, stage, argv, prep, time_seconds, every_layer)
            decoy = pair if pair is not None and tamper.needs_decoy(prep, first, every_layer=every_layer) else None
        else:
            (first, res, ok), decoy = _run_once(gspec, stage / "out", argv, prep.files, time_seconds), None
        seen = tamper.assess(prep, first, decoy, junit_nodeid)
        consistent = ok and not res.timed_out and _consistent(seen.returncode, seen.cases)
        return GradeResult(seen.returncode, res.timed_out, seen.cases, consistent, res.stdout, res.stderr,
                           res.wall_seconds, tree_digest(stage / "workspace"), seen.findings, seen.grading)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


_Run = tamper.Run[TestOutcome]


def _run_pair(gspec: SandboxSpec, stage: Path, argv: list[str], prep: tamper.GraderPayload,
              time_seconds: float | None, every_layer: bool) -> tuple[_Run, SandboxResult, bool, _Run | None]:
    """The real run and the honeypot run, in an order drawn at random, each staged afresh just before it (its
    own copy of the workspace, /grader and /grader-out): what a run can read (its dirs'
    inodes and times, the clock against them) reads the same in both, and nothing one run leaves reaches the
    other. On 81c7330 the honeypot run always came second in dirs made with the first: a submission read
    /grader-out's mtime (or inode) against /grader/pytest.ini's, forged the first run alone and was a
    certified pass. (Run at once, the two could signal each other through a lock on the shared workspace.)
    A real run that came first and needs no honeypot run (it failed) is the grade alone: its order was drawn
    before it ran, so skipping the second tells no run anything."""
    jobs = [(True, prep.files), (False, prep.decoy)]
    if secrets.randbits(1):
        jobs.reverse()
    done: dict[bool, tuple[_Run, SandboxResult, bool]] = {}
    for n, (real, files) in enumerate(jobs):
        here = stage / f"run-{n}"  # kept until the grade is read (the observer's record is in its out dir)
        here.mkdir(mode=0o755)
        copy_tree(stage / "workspace", here / "workspace")
        (here / "grader").mkdir(mode=0o755)
        (here / "grader" / "pytest.ini").write_text("[pytest]\n", "utf-8")
        (here / "grader" / "pytest.ini").chmod(0o644)
        spec = replace(gspec, ro_binds=((here / "workspace", "/workspace"), (here / "grader", "/grader")))
        done[real] = _run_once(spec, here / "out", argv, files, time_seconds)
        if real and not tamper.needs_decoy(prep, done[True][0], every_layer=every_layer):
            break
    first, res, ok = done[True]
    return first, res, ok, done[False][0] if False in done else None


def _run_once(gspec: SandboxSpec, out: Path, argv: list[str], files: dict[str, str],
              time_seconds: float | None) -> tuple[tamper.Run[TestOutcome], SandboxResult, bool]:
    """One pytest run on ``files`` (the hidden tree) into a fresh ``out``: its cases, result and sound report."""
    out.mkdir(mode=0o755)
    give_to_sandbox(out, gspec)
    res = run(replace(gspec, rw_binds=((out, "/grader-out"),)), argv, time_seconds=time_seconds,
              stdin_data=json.dumps(files, sort_keys=True).encode("utf-8"))
    every, ok = parse_junit(out / "report.xml", summary_total(res.stdout))
    return tamper.Run(out, every, res.returncode, res.timed_out), res, ok


def _consistent(returncode: int, cases: tuple[TestOutcome, ...]) -> bool:
    """pytest exits 0 iff nothing failed and 1 iff something did; anything else means the report is not trusted."""
    bad = any(c.outcome in ("failed", "error") for c in cases)
    return (returncode == 0 and not bad and bool(cases)) or (returncode == 1 and bad)


@dataclass(frozen=True)
class GameOutcome:
    """What one graded game comes to: its outcome, the one-line why, and the run conditions it proves
    (``grader``: graded tree is the submitted one; ``harness``: the grader finished; ``integrity``: a report
    consistent with pytest's exit code and the expected test count, and not an unsubmitted green)."""

    outcome: str
    detail: str
    conditions: dict[str, bool]

    @property
    def tampered(self) -> bool:
        """The tamper checks fired (the outcome is then the agent's fail, reason ``grader_tampering``)."""
        return self.detail.startswith(f"{reasons.GRADER_TAMPERING}:")


def game_outcome(graded: GradeResult, submitted: str, start: str, expected_tests: int | None = None) -> GameOutcome:
    """The one rule turning a grade into a game outcome (``submitted``/``start``: tree digests of the
    submission and of the untouched starting workspace).

    The graded copy is read-only and the host's own: a mismatch comes from what the agent left (FIFOs,
    devices), and a report inconsistent with exit 0/1 from the submission (same uid as pytest) wrecking it.
    Both are the model's fail: as ``invalid`` (unrated) they would let an agent drop any task it cannot solve.
    A pass on a tree the agent never changed is ``invalid``: the exam is broken, not solved.
    """
    consistent = graded.unimportable or (graded.report_ok and (expected_tests is None
                                                               or len(graded.tests) == expected_tests))
    unsubmitted_green = graded.passed and submitted == start
    conditions = {"grader": graded.graded_digest == submitted, "harness": not graded.timed_out,
                  "integrity": consistent and not unsubmitted_green}

    def said(outcome: str, detail: str) -> GameOutcome:
        return GameOutcome(outcome, detail, conditions)

    if not conditions["grader"]:
        return said(MODEL_FAIL, "graded tree does not hash to the submitted workspace")
    if graded.timed_out:
        return said(LANE_ERROR, "grader timed out")
    if graded.tamper:  # a forged grade: the agent's fail, and the run that holds it issues nothing
        conditions["integrity"] = False
        return said(MODEL_FAIL, f"{reasons.GRADER_TAMPERING}: {graded.tamper[0]}")
    if graded.shadowed:
        return said(LANE_ERROR, "the package under test resolved outside the submission (a copy in the grader's "
                                "environment shadows it): the grade proves nothing")
    if graded.no_runner:
        return said(LANE_ERROR, str(graded.harness_broken()))
    if graded.unimportable:
        return said(MODEL_FAIL, "the package under test cannot be imported from the submission")
    if unsubmitted_green:
        return said(INVALID, "the untouched starting tree passes: the exam is broken, not solved")
    if not consistent:
        if graded.returncode not in (0, 1):
            return said(LANE_ERROR, f"grader broke (pytest exit {graded.returncode})")
        return said(MODEL_FAIL, "the grader's report is inconsistent with its exit code or test count")
    if graded.passed:
        return said(CERTIFIED_PASS, "hidden tests passed")
    return said(MODEL_FAIL, f"hidden tests failed ({len(graded.failing())} of {len(graded.tests)})")
