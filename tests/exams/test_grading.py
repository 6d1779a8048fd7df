"""The one grading outcome (``acx_oci.sandbox.grader.game_outcome``) and the tree digest it compares.

The verdict is pure: grade results built in memory, outcomes out. The ROM solver is its only caller in
production (tests/verifier/test_rom_solver.py and tests/verifier/test_rom_attacks.py play it end to end).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acx_oci.model import CERTIFIED_PASS, INVALID, LANE_ERROR, MODEL_FAIL
from acx_oci.sandbox import GradeResult, TestOutcome, game_outcome, tree_digest

START, SUBMITTED, OTHER = "sha256:" + "0" * 64, "sha256:" + "1" * 64, "sha256:" + "2" * 64
PASS2 = (TestOutcome("t::a", "passed"), TestOutcome("t::b", "passed"))
FAIL1 = (TestOutcome("t::a", "passed"), TestOutcome("t::b", "failed"))


def _graded(returncode: int = 0, tests: tuple[TestOutcome, ...] = PASS2, *, report_ok: bool = True,
            timed_out: bool = False, graded_digest: str = SUBMITTED) -> GradeResult:
    return GradeResult(returncode, timed_out, tests, report_ok, b"", b"", 0.1, graded_digest)


@pytest.mark.parametrize(("graded", "expected", "outcome", "detail"), [
    (_graded(), 2, CERTIFIED_PASS, "hidden tests passed"),
    (_graded(1, FAIL1), 2, MODEL_FAIL, "hidden tests failed (1 of 2)"),
    # the ROM solver's rule, now the only one: a graded tree that differs is the agent's doing, never unrated
    (_graded(graded_digest=OTHER), 2, MODEL_FAIL, "graded tree does not hash"),
    (_graded(timed_out=True, report_ok=False), 2, LANE_ERROR, "grader timed out"),
    (_graded(2, (), report_ok=False), None, LANE_ERROR, "pytest exit 2"),
    (_graded(0, PASS2, report_ok=False), None, MODEL_FAIL, "inconsistent"),
    (_graded(), 3, MODEL_FAIL, "inconsistent"),  # fewer tests than the task declares
], ids=["pass", "fail", "tree-changed", "grader-timeout", "grader-broke", "bad-report", "test-count"])
def test_verdict(graded: GradeResult, expected: int | None, outcome: str, detail: str) -> None:
    v = game_outcome(graded, SUBMITTED, START, expected)
    assert v.outcome == outcome and detail in v.detail, v


def test_a_pass_on_the_untouched_tree_is_invalid() -> None:
    v = game_outcome(_graded(graded_digest=START), START, START, 2)
    assert v.outcome == INVALID and "untouched" in v.detail
    assert v.conditions == {"grader": True, "harness": True, "integrity": False}


def test_conditions_say_which_run_condition_failed() -> None:
    assert game_outcome(_graded(), SUBMITTED, START, 2).conditions == {"grader": True, "harness": True,
                                                                  "integrity": True}
    assert game_outcome(_graded(graded_digest=OTHER), SUBMITTED, START).conditions["grader"] is False
    assert game_outcome(_graded(timed_out=True), SUBMITTED, START).conditions["harness"] is False


def test_tree_digest_sees_content_mode_and_links(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("1")
    d0 = tree_digest(tmp_path)
    (tmp_path / "a").chmod(0o755)
    d1 = tree_digest(tmp_path)
    (tmp_path / "l").symlink_to("a")
    d2 = tree_digest(tmp_path)
    (tmp_path / "empty").mkdir()
    d3 = tree_digest(tmp_path)
    assert len({d0, d1, d2, d3}) == 4


STALE = "def clamp(x, lo, hi):\n    return x\n"  # the package as an older release had it
FIXED = "def clamp(x, lo, hi):\n    return max(lo, min(hi, x))\n"
TEST = "from calc import clamp\n\n\ndef test_clamp():\n    assert clamp(50, 0, 10) == 10\n"


def _grade_in_process(tmp_path: Path, test: str, *, stale_beside: bool = False,
                      package: str = FIXED) -> GradeResult:
    """An imported exam's grade: ``package`` as the submission's ``src/calc.py``, ``test`` as the hidden test
    (``stale_beside``: an older copy of the package under test beside it, on pytest's sys.path)."""
    import shutil

    from acx_oci.sandbox import grade

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    sub, hidden = tmp_path / "sub", tmp_path / "hidden"
    (sub / "src").mkdir(parents=True, exist_ok=True)
    (sub / "src" / "calc.py").write_text(package)
    (hidden / "tests").mkdir(parents=True, exist_ok=True)
    if stale_beside:
        (hidden / "tests" / "calc.py").write_text(STALE)
    (hidden / "tests" / "test_calc.py").write_text(test)
    (hidden / "acx-grader.json").write_text(json.dumps({"packages": ["calc"]}))
    return grade(sub, hidden, time_seconds=60)


def _grade_with_stale_copy(tmp_path: Path, test: str) -> GradeResult:
    """The hidden tree holds an older copy of the package under test beside the test (on pytest's sys.path)."""
    return _grade_in_process(tmp_path, test, stale_beside=True)


def test_an_older_copy_of_the_package_in_the_graders_environment_does_not_shadow_the_submission(
        tmp_path: Path) -> None:
    from acx_oci.services.exams.importer import PROLOGUE

    graded = _grade_with_stale_copy(tmp_path, PROLOGUE + TEST)  # as exam import writes hidden tests
    assert graded.passed, graded.stdout.decode()[-2000:]


def test_a_package_under_test_resolved_outside_the_workspace_is_a_lane_error(tmp_path: Path) -> None:
    graded = _grade_with_stale_copy(tmp_path, TEST)  # no prologue: pytest's own sys.path entry wins
    assert graded.shadowed and not graded.passed
    assert b"package under test calc resolved outside /workspace: /tmp/acx-grader/tests/tests/calc.py" \
        in graded.stderr
    judged = game_outcome(graded, graded.graded_digest, START)
    assert judged.outcome == LANE_ERROR and "resolved outside the submission" in judged.detail


def test_a_submission_whose_package_cannot_be_imported_fails_it_does_not_break_the_grader(tmp_path: Path) -> None:
    """marshmallow 78393d8: the hidden conftest.py imports the package; the fix without its last hunk breaks the
    package's import, pytest stopped at the conftest (exit 4) and the play was a lane error (grader broke)."""
    from acx_oci.sandbox import grade
    from acx_oci.sandbox.graderboot import UNIMPORTABLE_EXIT

    sub, hidden = tmp_path / "sub", tmp_path / "hidden"
    (sub / "calc").mkdir(parents=True)
    (sub / "calc" / "__init__.py").write_text("from calc import utils\nSTAMP = utils.timestamp\n")
    (sub / "calc" / "utils.py").write_text("")
    (hidden / "tests").mkdir(parents=True)
    (hidden / "tests" / "conftest.py").write_text("import calc\n")
    (hidden / "tests" / "test_calc.py").write_text("import calc\n\n\ndef test_stamp():\n    assert calc.STAMP\n")
    (hidden / "acx-grader.json").write_text(json.dumps({"packages": ["calc"], "conftest": True}))
    graded = grade(sub, hidden, time_seconds=60)
    assert graded.returncode == UNIMPORTABLE_EXIT and graded.unimportable and not graded.passed
    assert b"package under test calc cannot be imported: AttributeError" in graded.stderr
    judged = game_outcome(graded, graded.graded_digest, START)
    assert judged.outcome == MODEL_FAIL and "cannot be imported" in judged.detail
    (sub / "calc" / "utils.py").write_text("timestamp = 1\n")  # the package imports: the grader's conftest runs
    assert grade(sub, hidden, time_seconds=60).passed


def test_hidden_test_ids_map_to_the_junit_report_node_ids() -> None:
    from acx_oci.sandbox.grader import junit_nodeid

    assert junit_nodeid("tests/test_calc.py::test_zero") == "tests.tests.test_calc::test_zero"
    assert junit_nodeid("test_a.py::TestX::test_y[1-2]") == "tests.test_a.TestX::test_y[1-2]"


def test_hidden_tests_in_a_package_run_after_their_files_are_gone(tmp_path: Path) -> None:
    """pytest imports a test package's __init__.py at setup, after the grader deleted the hidden files."""
    import shutil

    from acx_oci.sandbox import grade

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    sub, hidden = tmp_path / "sub", tmp_path / "hidden"
    sub.mkdir()
    (hidden / "tests").mkdir(parents=True)
    (hidden / "tests" / "__init__.py").write_text("")
    (hidden / "tests" / "test_pkg.py").write_text("def test_one():\n    assert 1\n")
    graded = grade(sub, hidden, time_seconds=60)
    assert graded.passed and graded.counts()["passed"] == 1, graded.stdout.decode()[-1500:]


SPAWNED = """import multiprocessing as mp

from calc import clamp


def clamped(q):
    q.put(clamp(50, 0, 10))


def test_clamp_in_a_spawned_child():
    ctx = mp.get_context("spawn")  # the child imports this module again, by name (filelock bb16d39's tests)
    q = ctx.Queue()
    p = ctx.Process(target=clamped, args=(q,))
    p.start()
    assert q.get(timeout=30) == 10
    p.join(30)
"""


def test_an_in_process_grade_keeps_the_hidden_files_for_a_spawned_child(tmp_path: Path) -> None:
    """Fails on 1f6fddc ("No module named 'test_calc'" in the child: the files were gone after collection). In
    process the package under test ran while pytest imported the tests, so deleting them hid nothing."""
    from acx_oci.services.exams.importer import PROLOGUE

    graded = _grade_in_process(tmp_path, PROLOGUE + SPAWNED)
    assert graded.passed and graded.grading["mode"] == "in-process", graded.stdout.decode()[-2000:]
    assert not _grade_in_process(tmp_path, PROLOGUE + SPAWNED, package=STALE).passed  # the child's answer: ours


def test_a_test_package_runs_on_pytest_8_whose_package_setup_imports_init_by_path(tmp_path: Path) -> None:
    """pytest 8+ imports a test package's ``__init__.py`` at setup *by path*, after the grader deleted it:
    every test of idna (``tests/__init__.py``) was an error in an environment image's pytest 9 (issue 37's walk;
    the grader leaves an empty stand-in). The grader's own boot runs here with this test run's pytest (the host's
    Debian pytest 7 never shows it), in bubblewrap with a private /tmp; the package's setup_module still runs."""
    import json
    import shutil
    import subprocess
    import sys

    from acx_oci.sandbox import parse_junit, pytest_argv

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    if int(pytest.__version__.split(".")[0]) < 8:
        pytest.skip("needs pytest 8+ (Package.setup imports __init__.py by path)")
    (tmp_path / "ws" / "calc").mkdir(parents=True)
    (tmp_path / "ws" / "calc" / "__init__.py").write_text(FIXED)
    (tmp_path / "ws" / "tests").mkdir()
    (tmp_path / "ws" / "tests" / "__init__.py").write_text("")  # the workspace's own copy, as idna's has
    (tmp_path / "grader").mkdir()
    (tmp_path / "grader" / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "out").mkdir()
    files = {"tests/__init__.py": "def setup_module():\n    pass\n", "tests/test_calc.py": TEST,
             "acx-grader.json": json.dumps({"packages": ["calc"]})}
    argv = pytest_argv(python=sys.executable)
    pytest_home = str(Path(pytest.__file__).parents[1])
    here = {"/usr", "/lib", "/lib64", "/bin", "/etc", sys.prefix, sys.base_prefix, pytest_home}
    roots = [a for d in sorted(here) for a in ("--ro-bind-try", d, d)]
    res = subprocess.run(
        ["bwrap", *roots, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
         "--ro-bind", str(tmp_path / "ws"), "/workspace", "--ro-bind", str(tmp_path / "grader"), "/grader",
         "--bind", str(tmp_path / "out"), "/grader-out", "--chdir", "/grader", "--", *argv],
        input=json.dumps(files).encode(), capture_output=True, timeout=120, check=False)
    cases, ok = parse_junit(tmp_path / "out" / "report.xml")
    assert res.returncode == 0 and ok, (res.stdout.decode()[-1500:], res.stderr.decode()[:1500])
    assert [(c.nodeid, c.outcome) for c in cases] == [("tests.tests.test_calc::test_clamp", "passed")]


def test_a_test_id_without_parameters_grades_every_case_of_a_parametrized_test(tmp_path: Path) -> None:
    """``path::test_fn`` names all of ``test_fn[...]``, as pytest's own selection does: click fc6c7c4's test is
    parametrized, and its id was 'not collected' (issue 37). The outcome of the id is all of its cases'."""
    import json
    import shutil

    from acx_oci.sandbox import grade

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    sub, hidden = tmp_path / "sub", tmp_path / "hidden"
    sub.mkdir()
    (sub / "calc.py").write_text(STALE)
    (hidden / "tests").mkdir(parents=True)
    (hidden / "tests" / "test_calc.py").write_text(
        "import pytest\nfrom calc import clamp\n\n\n@pytest.mark.parametrize('x', [5, 50])\n"
        "def test_clamp(x):\n    assert clamp(x, 0, 10) == min(x, 10)\n\n\ndef test_other():\n    assert 0\n")
    (hidden / "acx-grader.json").write_text(json.dumps({"packages": ["calc"],
                                                        "tests": ["tests/test_calc.py::test_clamp"]}))
    graded = grade(sub, hidden, time_seconds=60)
    assert graded.counts() == {"passed": 1, "failed": 1, "error": 0, "skipped": 0}, graded.stdout.decode()[-1500:]
    assert graded.outcome("tests/test_calc.py::test_clamp") == "failed"
    assert graded.outcome("tests/test_calc.py::test_clamp[5]") == "passed"
    assert graded.outcome("tests/test_calc.py::test_other") is None  # not graded


def _pytest_with_junit(tmp_path: Path, test_file: str) -> subprocess.CompletedProcess[bytes]:
    """This run's own pytest (9+: subtests in the core) on ``tmp_path/test_file``, its junit in ``r.xml``."""

    if int(pytest.__version__.split(".")[0]) < 9:
        pytest.skip("needs pytest 9+ (subtests in the core)")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml",
                           str(tmp_path / "r.xml"), str(tmp_path / test_file)], capture_output=True, cwd=tmp_path,
                          timeout=120, check=False)


def test_unittest_subtests_of_pytest_9_keep_the_report_consistent(tmp_path: Path) -> None:
    """pytest 9 counts unittest subtests in the junit report's ``tests`` with no testcase of their own:
    more-itertools' 202 graded tests (67 subtests) read as an inconsistent report, so its reference "failed 0
    of its 202 graded tests" in an environment image. This run's own pytest writes the report here."""
    from acx_oci.sandbox import parse_junit
    from acx_oci.sandbox.grader import summary_total

    (tmp_path / "test_sub.py").write_text(
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        for i in range(3):\n"
        "            with self.subTest(i=i):\n                self.assertTrue(i != FAIL and FAIL != 'i')\n"
        "\n\ndef test_b():\n    pass\n")
    for fail, want in ((-1, {"passed"}), (1, {"failed", "passed"}), ("i", {"failed", "passed"})):
        (tmp_path / "conftest.py").write_text(f"import builtins\nbuiltins.FAIL = {fail!r}\n")
        res = _pytest_with_junit(tmp_path, "test_sub.py")
        cases, strict = parse_junit(tmp_path / "r.xml")
        assert not strict and len(cases) == 2  # tests="5", two testcases
        cases, ok = parse_junit(tmp_path / "r.xml", summary_total(res.stdout))
        assert ok and {c.outcome for c in cases} == want, res.stdout[-400:]


def test_pytests_summary_survives_the_capture_of_a_long_run(tmp_path: Path) -> None:
    """pyparsing 51560caba5's untouched tree (1928 tests, 2008 subtests) printed over 64 KiB of tracebacks; the
    sandbox kept the head only, pytest's summary line was lost, the report's subtest count could not be
    checked, and certification called it a harness lane error ("the report contradicts pytest's exit
    status"). The sandbox keeps the tail too (:class:`Capture`): the same run's report is sound."""
    from acx_oci.sandbox import MAX_CAPTURE, parse_junit
    from acx_oci.sandbox.capture import Capture
    from acx_oci.sandbox.grader import summary_total

    (tmp_path / "test_long.py").write_text(
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_sub(self):\n        for i in range(4):\n"
        "            with self.subTest(i=i):\n                self.assertNotEqual(i, 2, 'x' * 100_000)\n\n"
        "    def test_ok(self):\n        pass\n")
    res = _pytest_with_junit(tmp_path, "test_long.py")
    assert res.returncode == 1 and len(res.stdout) > MAX_CAPTURE
    assert not parse_junit(tmp_path / "r.xml", summary_total(res.stdout[:MAX_CAPTURE]))[1]  # the head alone
    kept = Capture()
    for at in range(0, len(res.stdout), 65536):
        kept.add(res.stdout[at:at + 65536])
    cases, ok = parse_junit(tmp_path / "r.xml", summary_total(kept.value()))
    assert ok and len(cases) == 2 and len(kept.value()) < MAX_CAPTURE + 20 * 1024
