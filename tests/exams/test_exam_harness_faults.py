"""Harness faults in certification (issue 37): retried, then a lane error of the harness, never cached."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from acx_oci.errors import HarnessFault
from acx_oci.model import exam_record as xr
from acx_oci.sandbox import GradeResult, TestOutcome
from acx_oci.services import exams as ex
from acx_oci.services.exams import diagnosis, harness, stages

from ..conftest import TESTDATA

EAGAIN = b"setpriv: failed to execute /usr/bin/bwrap: Resource temporarily unavailable\n"
GOOD = GradeResult(0, False, (TestOutcome("t::a", "passed"),), True, b"", b"", 0.1)
FAILED = GradeResult(1, False, (TestOutcome("t::a", "failed"),), True, b"", b"", 0.1)
NO_START = GradeResult(126, False, (), False, b"", EAGAIN, 0.0)
LATE = GradeResult(-9, True, (), False, b"", b"", 60.0)


def _runs(*results: GradeResult) -> tuple[list[float], list[float], Callable[[float], GradeResult]]:
    queue, slept, deadlines = list(results), [], []

    def run(seconds: float) -> GradeResult:
        deadlines.append(seconds)
        return queue.pop(0)
    return slept, deadlines, run


def test_a_fork_failure_is_retried_and_a_persistent_one_is_a_harness_fault() -> None:
    slept, _, run = _runs(NO_START, NO_START, FAILED)
    assert harness.retried(run, expect_pass=False, what="x", deadline=60, sleep=slept.append) is FAILED
    assert slept == [harness.BACKOFF_SECONDS, 2 * harness.BACKOFF_SECONDS]
    _, _, run = _runs(NO_START, NO_START, NO_START)
    with pytest.raises(HarnessFault, match=r"could not start: setpriv: failed to execute .*3 attempts"):
        harness.retried(run, expect_pass=False, what="x", deadline=60, sleep=lambda s: None)


def test_a_reference_past_its_deadline_gets_twice_the_time_at_each_retry() -> None:
    """pyparsing efd56db4e5's reference ran past a fixed 60 s three times on a loaded machine: a lane error
    where the same tests, given the time, pass. Each retry doubles the deadline."""
    _, deadlines, run = _runs(LATE, LATE, GOOD)
    assert harness.retried(run, expect_pass=True, what="x", deadline=60, sleep=lambda s: None) is GOOD
    assert deadlines == [60, 120, 240]
    _, deadlines, run = _runs(LATE)
    assert harness.retried(run, expect_pass=False, what="x", deadline=60, sleep=lambda s: None) is LATE
    assert deadlines == [60]  # a control that hangs has failed: not run again
    _, deadlines, run = _runs(LATE, FAILED)  # the base's run deriving FAIL_TO_PASS: given the time, it reports
    assert harness.retried(run, expect_pass=False, what="x", deadline=60, whole=True, sleep=lambda s: None) is FAILED
    assert deadlines == [60, 120]
    _, deadlines, run = _runs(LATE, LATE, LATE)  # it hangs each time: the base's own (a deadlock's fix)
    assert harness.retried(run, expect_pass=False, what="x", deadline=60, whole=True, sleep=lambda s: None) is LATE


def test_a_timeout_is_a_fault_only_where_the_run_should_pass() -> None:
    assert harness.fault_of(LATE, expect_pass=True) == "grade past its deadline"
    assert harness.fault_of(LATE, expect_pass=False) is None  # a hanging control has failed
    # the base's run that derives FAIL_TO_PASS: every outcome is data. filelock bb16d39's base run was cut at
    # its deadline on a loaded machine, reported nothing, and all 186 tests that pass on the fix became
    # FAIL_TO_PASS, which the untouched tree then passed (refused: untouchedFails)
    assert harness.fault_of(LATE, expect_pass=False, whole=True) == "grade past its deadline"
    assert harness.fault_of(GOOD, expect_pass=True) is None and harness.fault_of(FAILED, expect_pass=True) is None
    assert harness.fault_of(GradeResult(-11, False, (), False, b"", b"", 1.0), expect_pass=False) == \
        "sandbox lost (signal 11)"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_a_gold_past_its_deadline_is_a_harness_lane_error_and_never_cached(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(TESTDATA / "exams-good", suite)
    ref = suite / "tasks" / "fx-0001" / "reference" / "solution.py"
    ref.write_text(ref.read_text() + "\nimport time\ntime.sleep(30)\n")  # a machine too loaded to finish in time
    monkeypatch.setattr(stages, "GRADE_SECONDS", 2.0)
    monkeypatch.setattr(harness, "BACKOFF_SECONDS", 0.0)
    lines: list[str] = []
    out = tmp_path / "certs"
    (rec,) = ex.certify_suite(suite / "tasks" / "fx-0001", jobs=1, out=out, progress=lines.append)
    gold = rec["stages"]["gold"]
    assert gold["laneError"] == "harness" and "grading the reference: grade past its deadline (3 attempts)" in \
        gold["reason"]
    assert rec["certified"] is False and rec["stages"]["eval"]["skipped"].startswith("harness lane error")
    assert not list((out / "by-freeze").glob("*.json"))  # the next run certifies again
    assert (out / "records" / "fx-0001.json").is_file()
    (line,) = lines
    assert line.startswith("exam certify [1/1] fx-0001: harness lane error, not cached (harness lane error: ")


def test_a_reference_that_fails_says_why_in_the_record() -> None:
    """A real fix whose tests need a module the grader's environment lacks, or the network, is refused for
    that reason, said in the record (issue 37): not a bare ``referencePasses: false`` to be read as a fault."""
    out = (b"E   ModuleNotFoundError: No module named 'hypothesis.strategies'\n"
           b"E   ModuleNotFoundError: No module named 'calc'\n"
           b"urllib3.exceptions.NewConnectionError: Failed to establish a new connection: [Errno -3] "
           b"Temporary failure in name resolution\n")
    gold = GradeResult(1, False, (TestOutcome("tests.test_calc::test_a", "error"),
                                  TestOutcome("tests.test_calc::test_b", "passed")), True, out, b"", 0.1)
    facts = diagnosis.why_reference_fails(gold, ["src/calc/__init__.py", "README.md"])
    assert facts["referenceMissingModules"] == ["hypothesis"]  # calc is the submission's own: not a dependency
    assert facts["referenceNeedsNetwork"] is True and facts["referenceFailing"] == ["test_a"]
    assert facts["referenceFirstError"] == "ModuleNotFoundError: No module named 'hypothesis.strategies'"
    assert facts["reason"].startswith("the reference fails 1 of its 2 graded tests; modules the environment "
                                      "lacks (test dependencies, not the repository's): hypothesis; its tests "
                                      "reach for the network")
    facts = diagnosis.why_reference_fails(FAILED, [])
    assert "referenceMissingModules" not in facts and "referenceNeedsNetwork" not in facts
    assert "referenceMissingFixtures" not in facts
    # requests bc7dd0f: its conftest wraps pytest-httpbin's fixture, and the plugin is not loaded (issue 37's walk)
    plugin = GradeResult(1, False, (TestOutcome("tests.test_r::test_h", "error"),), True,
                         b"E       recursive dependency involving fixture 'httpbin' detected\n"
                         b"E       fixture 'mocker' not found\n", b"", 0.1)
    facts = diagnosis.why_reference_fails(plugin, [])
    assert facts["referenceMissingFixtures"] == ["httpbin", "mocker"]
    assert facts["reason"] == ("the reference fails 1 of its 1 graded tests; fixtures pytest could not provide: "
                               "httpbin, mocker (a plugin's the environment does not install?)")
    lost = GradeResult(4, False, (), False, b"", b"ERROR: grader: test id not collected: tests/t.py::T::x\n", 0.1)
    assert diagnosis.why_reference_fails(lost, [])["reason"] == ("the reference's grade reported no tests (pytest exit "
                                                             "4); a graded test id is not collected: tests/t.py::T::x")


def test_a_reference_whose_graded_test_is_skipped_here_says_so(tmp_path: Path) -> None:
    """attrs f53fc54: its test is for Python 3.13+ and the environment had 3.11; the record said "the reference
    fails 0 of its 1 graded tests". A skip is no pass, and the record says it was a skip, and why."""
    from acx_oci.sandbox import grade
    (tmp_path / "sub").mkdir()
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "test_new.py").write_text(
        "import pytest\n\n\n@pytest.mark.skipif(True, reason='requires Python 3.13+')\ndef test_replace():\n"
        "    pass\n\n\ndef test_other():\n    pass\n")
    gold = grade(tmp_path / "sub", tmp_path / "hidden", time_seconds=60)
    assert not gold.passed
    facts = diagnosis.why_reference_fails(gold, [])
    assert facts["referenceSkipped"] == ["test_replace"] and facts["referenceFailing"] == []
    assert facts["reason"] == "the reference fails 0 of its 2 graded tests; 1 skipped here (requires Python 3.13+)"


def test_an_interrupted_certification_stops_the_exams_not_yet_started(tmp_path: Path) -> None:
    """SIGTERM or Ctrl-C raised while a suite certifies ended the command only after every queued exam had been
    certified (the pool waited for them all): a long real corpus could not be stopped (issue 37)."""
    suite = tmp_path / "suite"
    shutil.copytree(TESTDATA / "exams-good", suite)
    doc = json.loads((suite / "benchmark.json").read_text())
    for n in range(4, 7):  # six exams, each refused at once by its contract (no family registry: no sandbox)
        shutil.copytree(suite / "tasks" / "fx-0001", suite / "tasks" / f"fx-000{n}")
        yaml = suite / "tasks" / f"fx-000{n}" / "exam.yaml"
        yaml.write_text(yaml.read_text().replace("fx-0001", f"fx-000{n}"))
        doc["tasks"].append({"id": f"fx-000{n}", "difficulty": 15, "dir": f"tasks/fx-000{n}"})
    (suite / "benchmark.json").write_text(json.dumps(doc))
    (suite / "families.yaml").unlink()

    def interrupt(line: str) -> None:
        raise KeyboardInterrupt

    out = tmp_path / "certs"
    with pytest.raises(KeyboardInterrupt):
        ex.certify_suite(suite, jobs=1, out=out, progress=interrupt)
    assert len(list((out / "records").glob("*.json"))) <= 2  # of six: the one running, at most one more


def test_an_eval_play_that_should_fail_and_hangs_has_failed() -> None:
    """pyparsing 51560ca's base recurses for minutes on the very bug: its untouched play timed out three times
    and certification called it a harness lane error (issue 37). A hang fails where the play should fail; where
    it should pass (the reference) it is still the harness's fault."""
    from acx_oci.model import LANE_ERROR, MODEL_FAIL
    from acx_oci.services.exams.evaluation import hang_fails

    outcome, detail = hang_fails(LANE_ERROR, "grader timed out", expect_pass=False)
    assert outcome == MODEL_FAIL and detail.startswith("grader timed out")
    assert hang_fails(LANE_ERROR, "grader timed out", expect_pass=True) == (LANE_ERROR, "grader timed out")
    assert hang_fails(LANE_ERROR, "sandbox lost", expect_pass=False) == (LANE_ERROR, "sandbox lost")


def test_a_lane_error_after_the_grader_stage_ran_is_still_a_valid_record() -> None:
    """A fault in the eval stage (pyparsing 51560ca) left the grader stage without its promotion flags: the
    record failed the schema and ``exam certify`` could not write its summary (issue 37)."""
    from acx_oci.services.exams.source import load_exam

    src = load_exam(TESTDATA / "exams-good" / "tasks" / "fx-0001")
    ran = {"seed": {"ok": True}, "gold": {"ok": True}, "grader": {"ok": False, "distinguished": True},
           "attack": {"ok": False, "trivialExploits": [], "goldStillPassesAfterSuite": False}}
    rec = stages._harness_record(src, ran, "eval play untouched: grader timed out (3 attempts)")
    assert xr.check_record(rec) == [] and rec["stages"]["eval"]["laneError"] == "harness"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_an_interrupt_stops_the_exams_in_flight_as_lane_errors(tmp_path: Path) -> None:
    """SIGTERM or Ctrl-C waited for every exam in flight to finish its last grade (attrs: 40 minutes for one
    whose runner loads the package). Now each stops at once, as a harness lane error: no verdict, never cached,
    graded again by the next run."""
    suite = tmp_path / "suite"
    shutil.copytree(TESTDATA / "exams-good", suite)
    doc = json.loads((suite / "benchmark.json").read_text())
    shutil.copytree(suite / "tasks" / "fx-0001", suite / "tasks" / "aa-retired")  # sorts first: refused at once
    yaml = suite / "tasks" / "aa-retired" / "exam.yaml"
    yaml.write_text(yaml.read_text().replace("fx-0001", "aa-retired").replace("fx-functions", "fx-old"))
    doc["tasks"] = [{"id": "aa-retired", "difficulty": 15, "dir": "tasks/aa-retired"}, doc["tasks"][0]]
    (suite / "benchmark.json").write_text(json.dumps(doc))

    grading = threading.Event()  # fx-0001 is past its contract: grading in its sandboxes

    def heard(exam: str, stage: str, step: int, of: int) -> None:
        if exam == "fx-0001" and stage != "contract":
            grading.set()

    def interrupt(line: str) -> None:
        if "aa-retired" in line:  # its refusal comes first; the interrupt, once fx-0001 is in flight
            grading.wait(300)
        raise KeyboardInterrupt

    out = tmp_path / "certs"
    with pytest.raises(KeyboardInterrupt):
        ex.certify_suite(suite, jobs=2, out=out, progress=interrupt, stages=heard)
    assert grading.is_set()
    recs = {p.stem: json.loads(p.read_text()) for p in (out / "records").glob("*.json")}
    assert recs["aa-retired"]["stages"]["seed"]["familyActive"] is False
    fault = harness.lane_error(recs["fx-0001"]["stages"])  # stopped in flight, not graded to its end
    assert fault is not None and "interrupted" in fault, recs["fx-0001"]["stages"]
    assert not list((out / "by-freeze").glob("*.json"))  # a lane error is no verdict: never cached
    from acx_oci.sandbox import SandboxSpec, run

    assert run(SandboxSpec(), ["true"]).returncode == 0  # the next run of this process runs sandboxes again
