"""Harness faults in certification: retried a bounded number of times, then a lane error of the harness.

A grade that ran past its deadline under load, a fork/exec that failed with EAGAIN (``setpriv: failed to
execute /usr/bin/bwrap: Resource temporarily unavailable``), a sandbox lost to a signal, or a harness that
cannot run (pytest unimportable, nothing collected, a report contradicting the exit status: issue 45) says
nothing about the exam. Counting it as the exam's failure (and caching that refusal by freeze hash) refused
good exams on a busy machine and then on an idle one too (issue 37): it is retried, and if it persists the record says
``laneError: harness`` and is never cached.
"""

from __future__ import annotations

import errno
import itertools
import re
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from acx_oci.errors import HarnessFault, SandboxUnavailable
from acx_oci.sandbox import GradeResult

#: Attempts after the first; each waits a little longer (the load that caused the fault may pass).
RETRIES = 2
BACKOFF_SECONDS = 1.0
#: Each attempt after a fault has this many times the previous one's deadline: a real repository's tests that
#: take 40 s on an idle machine ran past a fixed 60 s three times on a loaded one (pyparsing efd56db4e5).
DEADLINE_GROWTH = 2.0
LANE = "harness"
_SANDBOX_FAILED = re.compile(rb"Resource temporarily unavailable|Cannot allocate memory|^setpriv: |^bwrap: ", re.M)


def transient(exc: SandboxUnavailable) -> bool:
    """A sandbox that could not start because fork/exec ran out of processes or memory (EAGAIN, ENOMEM)."""
    return isinstance(exc.__cause__, OSError) and exc.__cause__.errno in (errno.EAGAIN, errno.ENOMEM)


def fault_of(result: GradeResult, *, expect_pass: bool, upstream: bool = False, whole: bool = False) -> str | None:
    """Why a grade is a harness fault, or None. A timeout is one only where the run should pass (a control
    that hangs has failed); a sandbox that could not start or died by a signal, without a report, always is,
    and so is a test runner that cannot start. For a run of ``upstream``'s own code (the base, the fix, a
    control, a mutant; not an attack probe built to wreck the report) a collection that finds nothing or a
    report that contradicts the exit status is one too (:meth:`GradeResult.harness_broken`), unless pytest
    itself imports the package under test and the run should fail (then the tree broke its runner). That holds
    for a runner that cannot start at all, too: the reference started it in the same image, so a mutant or a
    control that stops it has failed (attrs 62bdbf234f's mutant broke ``attr``, and jsonschema, loaded with
    pytest-mypy-plugins, raised ``NoSuchResource``); not for the base's run that derives the tests
    (``whole``), whose every outcome is data."""
    if result.timed_out:  # ``whole``: a run whose every outcome is data (the base's, deriving FAIL_TO_PASS)
        return "grade past its deadline" if expect_pass or whole else None
    broken = result.harness_broken()
    if broken is not None and (upstream or result.no_runner):
        # pytest runs the tree's own package (iniconfig's mutant): a tree that breaks the runner has failed
        tree_broke_it = result.package_before_runner and not expect_pass and not (result.no_runner and whole)
        return None if tree_broke_it else broken
    if result.tests:
        return None
    line = _SANDBOX_FAILED.search(result.stderr)
    if line is not None:
        end = result.stderr.find(b"\n", line.start())
        start = result.stderr.rfind(b"\n", 0, line.start()) + 1
        return "sandbox could not start: " + result.stderr[start:end if end >= 0 else None].decode(
            "utf-8", "replace")[:200]
    if result.returncode < 0:
        return f"sandbox lost (signal {-result.returncode})"
    return None


def retried(run: Callable[[float], GradeResult], *, expect_pass: bool, what: str, upstream: bool = False,
            deadline: float, whole: bool = False, sleep: Callable[[float], None] = time.sleep) -> GradeResult:
    """``run(seconds)`` until it is no harness fault, at most 1 + :data:`RETRIES` times, the deadline growing
    by :data:`DEADLINE_GROWTH` each time; then :class:`HarnessFault`. A ``whole`` run (the base's, whose every
    outcome is data) past its deadline each time is the tree's: its tests hang there (a deadlock's fix)."""
    why = ""
    for attempt in range(RETRIES + 1):
        if attempt:
            sleep(BACKOFF_SECONDS * attempt)
        try:
            result = run(deadline * DEADLINE_GROWTH ** attempt)
        except SandboxUnavailable as exc:
            if not transient(exc):
                raise
            why = str(exc)
            continue
        fault = fault_of(result, expect_pass=expect_pass, upstream=upstream, whole=whole)
        if fault is None or (whole and not expect_pass and result.timed_out and attempt == RETRIES):
            return result
        why = fault
    raise HarnessFault(f"{what}: {why} ({RETRIES + 1} attempts)")


def lane_error(record_stages: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The harness lane error a record's stages carry, if any (such a record is never cached)."""
    for stage in record_stages.values():
        if stage.get("laneError") == LANE:
            return str(stage.get("reason") or "harness fault")
    return None


def graded_all(runs: Mapping[str, Callable[[], GradeResult]], lanes: int,
               note: Callable[[int], None] | None = None) -> dict[str, GradeResult]:
    """Each of ``runs`` (independent grades, each in a sandbox of its own), ``lanes`` at a time, in ``runs``'
    order: one exam's probes and mutants use the cores the suite's other exams leave free. ``note(k)`` is called
    as the k-th grade starts (under a lock: progress steps in order from any lane). The first fault raised (a
    :class:`HarnessFault`) is raised here; grades not yet started are not started."""
    started, lock = itertools.count(1), threading.Lock()

    def noted(run: Callable[[], GradeResult]) -> Callable[[], GradeResult]:
        def go() -> GradeResult:
            if note is not None:
                with lock:
                    note(next(started))
            return run()
        return go
    if lanes <= 1 or len(runs) <= 1:
        return {name: noted(run)() for name, run in runs.items()}
    pool = ThreadPoolExecutor(max_workers=lanes)
    try:
        futures = {name: pool.submit(noted(run)) for name, run in runs.items()}
        return {name: fut.result() for name, fut in futures.items()}
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
