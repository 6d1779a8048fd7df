"""Exams from repositories as a user imports them (issue 45): the tool derives what it grades, a harness that
cannot run is never a grade, the package under test from the runner's start, the repository's pytest settings
and test-support files, the environment's plugins. Small generated repositories, graded in bubblewrap by
Debian's ``/usr/bin/python3`` pytest; each test says how it fails on the main this session started from
(commit 8c6af49)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acx_oci.model import LANE_ERROR
from acx_oci.model import exam_record as xr
from acx_oci.sandbox import GradeResult, TestOutcome, game_outcome, parse_junit
from acx_oci.services.exams import diagnosis, harness, pytestconf

from ..support.cli import cli
from ..support.jsondoc import check_document
from .test_exam_import import BASE_CALC, FIXED_CALC, HIDDEN, commit, git

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
DEBIAN_INICONFIG = Path("/usr/lib/python3/dist-packages/iniconfig/__init__.py")

#: Upstream's test file as real ones are: the fix's tests, one passing on both, one failing on both (not this
#: fix's business), a platform skip and an xfail upstream marks.
HIDDEN_REAL = HIDDEN.replace("from calc import clamp, sign", "import sys\n\nimport pytest\n\nfrom calc import add, "
                             "clamp, sign") + '''

def test_add():
    assert add(2, 2) == 4


def test_float_add_exact():
    assert add(0.1, 0.2) == 0.3


@pytest.mark.skipif(sys.platform != "win32", reason="Requires Windows")
def test_windows_paths():
    assert add("a", "b") == "ab"


@pytest.mark.xfail(reason="strings are not numbers yet", strict=True)
def test_add_mixed():
    assert add("a", 1) == "a1"
'''
#: A fix whose test the base already passes: nothing to solve.
HIDDEN_WEAK = "from calc import add\n\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n"
SECTIONS = '''

def section_names(text):
    """The names of the [sections] of an ini text, in order."""
    return [line.strip()[1:-1].strip() for line in text.splitlines() if line.strip().startswith("[")
            and line.strip().endswith("]")]
'''
HIDDEN_SECTIONS = '''import iniconfig


def test_section_names():
    assert iniconfig.section_names("[a]\\nx = 1\\n [ b ] \\n") == ["a", "b"]


def test_no_sections():
    assert iniconfig.section_names("x = 1\\n") == []


def test_parses_as_before():
    assert iniconfig.IniConfig("t.ini", data="[s]\\nk = v\\n")["s"]["k"] == "v"
'''
#: Upstream names its tests ``check_*`` and says so in pyproject.toml (with a marker it registers).
PYPROJECT = '[project]\nname = "calc"\nversion = "1.0"\n\n[tool.pytest.ini_options]\npython_functions = ' \
            '["check_*"]\nmarkers = ["slow: slow tests"]\naddopts = "-p no:nothing --strict-config"\n'
HIDDEN_CHECKS = '''import pytest

from calc import clamp, sign


@pytest.mark.slow
def check_clamp():
    assert clamp(-5, 0, 10) == 0 and clamp(50, 0, 10) == 10


def check_sign():
    assert sign(0) == 0 and sign(-2) == -1
'''
RENDER_BASE = BASE_CALC + '\n\ndef render(name):\n    return "hello " + name\n'
RENDER_FIXED = FIXED_CALC + '\n\ndef render(name):\n    return "<p>hello %s</p>\\n" % name\n'
HIDDEN_RENDER = '''from pathlib import Path

from calc import clamp, render, sign

HERE = Path(__file__).parent


def test_render_matches_the_template():
    assert render("x") == (HERE / "templates" / "hello.html").read_text()


def test_clamp():
    assert clamp(-5, 0, 10) == 0 and clamp(50, 0, 10) == 10


def test_sign():
    assert sign(0) == 0 and sign(-2) == -1 and sign(3) == 1
'''


def _repo(path: Path, base: dict[str, str], fix: dict[str, str]) -> tuple[str, str]:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    b = commit(path, base, "initial", "2026-03-01T10:00:00Z")
    f = commit(path, fix, "Fix the bug", "2026-03-05T10:00:00Z")
    return b, f


def _import(repo: Path, base: str, fix: str, eid: str, suite: Path) -> dict[str, Any]:
    """``exam import`` with the docs' defaults (no --tests, no flag the docs do not give)."""
    res = cli("exam", "import", "--classification", "public",
              "--repo", repo, "--base", base, "--fix", fix, "--id", eid, "-o", suite, "--json")
    (e,) = check_document("exam import", res.stdout, res.exit_code)["exams"]
    return dict(e)


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Five exams from five small repositories, imported with defaults and certified together."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    tmp = tmp_path_factory.mktemp("derive")
    suite = tmp / "suite"
    exams: dict[str, Any] = {}
    b, f = _repo(tmp / "real", {"calc.py": BASE_CALC, "tests/test_calc.py": HIDDEN_WEAK},
                 {"calc.py": FIXED_CALC, "tests/test_calc.py": HIDDEN_REAL})
    exams["real"] = _import(tmp / "real", b, f, "real", suite)
    b, f = _repo(tmp / "weak", {"calc.py": BASE_CALC}, {"calc.py": FIXED_CALC, "tests/test_weak.py": HIDDEN_WEAK})
    exams["weak"] = _import(tmp / "weak", b, f, "weak", suite)
    b, f = _repo(tmp / "cfg", {"calc.py": BASE_CALC, "pyproject.toml": PYPROJECT},
                 {"calc.py": FIXED_CALC, "tests/test_checks.py": HIDDEN_CHECKS})
    exams["cfg"] = _import(tmp / "cfg", b, f, "cfg", suite)
    b, f = _repo(tmp / "data", {"calc.py": RENDER_BASE, "tests/templates/hello.html": "<p>hello x</p>\n"},
                 {"calc.py": RENDER_FIXED, "tests/test_render.py": HIDDEN_RENDER})
    exams["data"] = _import(tmp / "data", b, f, "data", suite)
    if DEBIAN_INICONFIG.is_file():  # the package Debian's pytest itself imports at start-up
        ini = DEBIAN_INICONFIG.read_text()
        b, f = _repo(tmp / "iniconfig", {"iniconfig/__init__.py": ini},
                     {"iniconfig/__init__.py": ini + SECTIONS, "testing/test_sections.py": HIDDEN_SECTIONS})
        exams["iniconfig"] = _import(tmp / "iniconfig", b, f, "iniconfig", suite)
    cert = cli("exam", "certify", suite, "--out", tmp / "certs", "--jobs", "2", "--json", "--no-environments")
    records = {r["exam"]: r for r in json.loads(cert.stdout)["records"]}
    return {"tmp": tmp, "exams": exams, "records": records}


@needs_bwrap
def test_the_tool_derives_fail_to_pass_and_pass_to_pass_and_names_the_rest(certified: dict[str, Any]) -> None:
    """Rule 1: a fix imported with defaults whose test file also holds a test failing on both, a platform skip
    and an xfail certifies, grading exactly FAIL_TO_PASS + PASS_TO_PASS. On 8c6af49 every test of the file
    was graded: the reference "fails 1 of its 8 graded tests; 1 skipped here" and the exam was refused."""
    rec = certified["records"]["real"]
    assert rec["certified"] is True, xr.failures(rec)
    tests = rec["stages"]["gold"]["tests"]
    f = "tests/test_calc.py::"
    assert tests["failToPass"] == [f + t for t in ("test_clamp_high", "test_clamp_low", "test_sign_negative",
                                                   "test_sign_zero")]
    assert tests["passToPass"] == [f + "test_add"]
    assert tests["notGraded"] == {"failBoth": [f + "test_float_add_exact"], "skipped": [f + "test_windows_paths"],
                                  "xfail": [f + "test_add_mixed"]}
    assert rec["stages"]["gold"]["untouchedFails"] is True
    assert rec["stages"]["eval"]["plays"]["gold"] == "certified-pass"  # the eval grades the same ids


@needs_bwrap
def test_a_fix_whose_tests_the_base_passes_has_nothing_to_solve(certified: dict[str, Any]) -> None:
    """Rule 1: no FAIL_TO_PASS test, refused as SWE-bench's validation discards it, in those words (8c6af49
    said only ``untouchedFails: false``)."""
    gold = certified["records"]["weak"]["stages"]["gold"]
    assert gold["ok"] is False and gold["nothingToSolve"] is True
    assert gold["reason"].startswith("nothing to solve: no hidden test fails on the base and passes with the fix")
    assert gold["tests"]["failToPass"] == [] and gold["tests"]["passToPass"] == ["tests/test_weak.py::test_add_zero"]


@needs_bwrap
def test_the_repositorys_pytest_settings_are_the_graders(certified: dict[str, Any]) -> None:
    """Rule 5: pyproject's ``python_functions``/``markers`` reach the grader (its ``addopts`` never does). On
    8c6af49 the grader collected no ``check_*`` test and the reference failed."""
    exam = Path(certified["exams"]["cfg"]["dir"])
    conf = json.loads((exam / "hidden" / "acx-grader.json").read_text())
    assert conf["ini"] == {"markers": "slow: slow tests", "python_functions": "check_*"}
    rec = certified["records"]["cfg"]
    assert rec["certified"] is True, xr.failures(rec)
    assert rec["stages"]["gold"]["tests"]["failToPass"] == ["tests/test_checks.py::check_clamp",
                                                            "tests/test_checks.py::check_sign"]


@needs_bwrap
def test_test_data_beside_the_tests_is_there_while_they_run(certified: dict[str, Any]) -> None:
    """Rule 5: ``tests/templates/hello.html`` goes with the hidden tree as the repository lays it out and is
    still there when the test reads it. On 8c6af49 it was left out (and the hidden tree was gone by then):
    the reference failed on a missing file."""
    exam = Path(certified["exams"]["data"]["dir"])
    assert (exam / "hidden" / "tests" / "templates" / "hello.html").is_file()
    rec = certified["records"]["data"]
    assert rec["certified"] is True, xr.failures(rec)
    assert "tests/test_render.py::test_render_matches_the_template" in rec["stages"]["gold"]["tests"]["failToPass"]


@needs_bwrap
@pytest.mark.skipif(not DEBIAN_INICONFIG.is_file(), reason="Debian's python3-iniconfig not installed")
def test_a_package_pytest_itself_imports_is_the_submissions_from_the_start(certified: dict[str, Any]) -> None:
    """Rule 3: pytest imports ``iniconfig`` at start-up; the submission's copy is what it imports, so the fix is
    graded. On 8c6af49 pytest had imported Debian's copy first and every grade was "the package under test
    resolved outside the submission" (a lane error): the exam could never certify."""
    rec = certified["records"]["iniconfig"]
    assert rec["certified"] is True, xr.failures(rec)
    gold = rec["stages"]["gold"]
    assert gold["packageBeforeRunner"] is True
    assert gold["tests"]["failToPass"] == ["testing/test_sections.py::test_no_sections",
                                           "testing/test_sections.py::test_section_names"]


def _boot(tmp_path: Path, files: dict[str, str], python: str, *, hide: tuple[str, ...] = (),
          workspace: dict[str, str] | None = None) -> GradeResult:
    """The grader's own boot run as the grader runs it (plugin autoload off), in bubblewrap on the host's
    root, with ``hide`` folders emptied: an environment whose pytest is missing is made so."""
    from acx_oci.sandbox import pytest_argv
    from acx_oci.sandbox.grader import summary_total

    ws = tmp_path / "ws"
    for rel, text in (workspace or {}).items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    ws.mkdir(exist_ok=True)
    (tmp_path / "grader").mkdir()
    (tmp_path / "grader" / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "out").mkdir()
    pytest_home = str(Path(pytest.__file__).parents[1])
    here = {"/usr", "/lib", "/lib64", "/bin", "/etc", sys.prefix, sys.base_prefix, pytest_home}
    roots = [a for d in sorted(here) for a in ("--ro-bind-try", d, d)]
    masks = [a for d in hide for a in ("--tmpfs", d)]
    res = subprocess.run(
        ["bwrap", *roots, *masks, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--setenv",
         "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1", "--ro-bind", str(ws), "/workspace", "--ro-bind",
         str(tmp_path / "grader"), "/grader", "--bind", str(tmp_path / "out"), "/grader-out", "--chdir", "/grader",
         "--", *pytest_argv(python=python)],
        input=json.dumps(files).encode(), capture_output=True, timeout=120, check=False)
    cases, ok = parse_junit(tmp_path / "out" / "report.xml", summary_total(res.stdout))
    return GradeResult(res.returncode, False, cases, ok, res.stdout, res.stderr, 1.0)


@needs_bwrap
def test_a_runner_that_cannot_start_is_the_harnesss_lane_error(tmp_path: Path) -> None:
    """Rule 2: pytest cannot be imported (an environment that left it out): the boot says so and exits with
    its own code; the grade is a lane error, never "the base fails". On 8c6af49 the boot died with a
    traceback (exit 1, no report), read as the submission's fail."""
    from acx_oci.sandbox.graderboot import NO_RUNNER_EXIT

    files = {"test_a.py": "def test_a():\n    assert True\n", "acx-grader.json": json.dumps({"packages": ["calc"]})}
    got = _boot(tmp_path, files, "/usr/bin/python3", hide=("/usr/lib/python3/dist-packages",),
                workspace={"calc.py": BASE_CALC})
    assert got.returncode == NO_RUNNER_EXIT and got.no_runner, got.stderr.decode()[-800:]
    assert got.harness_broken() == ("the test runner cannot start: import pytest and the environment's plugins: "
                                    "ModuleNotFoundError: No module named 'pytest'")
    assert game_outcome(got, got.graded_digest, "start").outcome == LANE_ERROR
    assert harness.fault_of(got, expect_pass=False) is not None  # even for a probe's run


def test_nothing_collected_or_a_report_against_the_exit_status_is_a_fault_of_upstream_runs() -> None:
    """Rule 2: for runs of upstream's own code (the base, the fix, controls, mutants) an empty collection or a
    report contradicting pytest's exit status is the harness's, never "the base fails" or "a mutant is
    killed"; an attack probe's wrecked report stays its own fail. 8c6af49 had no such distinction."""
    empty = GradeResult(5, False, (), False, b"no tests ran in 0.01s\n", b"", 0.1)
    liar = GradeResult(1, False, (TestOutcome("tests.t::test_a", "passed"),), False, b"", b"", 0.1)
    fine = GradeResult(1, False, (TestOutcome("tests.t::test_a", "failed"),), True, b"", b"", 0.1)
    assert harness.fault_of(empty, expect_pass=False, upstream=True) == ("the grader collected no test (pytest "
                                                                          "exit 5): no tests ran in 0.01s")
    # pytest exit 2 (interrupted at collection: an unknown option of an old pytest) with no test: the harness's
    # too, naming pytest's own error (before: "nothing to solve", and every mutant "killed")
    stopped = GradeResult(2, False, (), False, b"rootdir: /grader\n", b"pytest: error: unrecognized arguments\n", 0.1)
    assert harness.fault_of(stopped, expect_pass=False, upstream=True) == (
        "the grader collected no test (pytest exit 2): rootdir: /grader")
    assert str(harness.fault_of(liar, expect_pass=False, upstream=True)).startswith(
        "the report contradicts pytest's exit status (exit 1, 0 of 1 tests")
    assert harness.fault_of(liar, expect_pass=False) is None  # a probe that wrecks the report has failed
    assert harness.fault_of(fine, expect_pass=False, upstream=True) is None
    # pytest itself imports the package under test (iniconfig): a mutant that breaks the runner has failed;
    # the reference that should pass and cannot is still the harness's
    early = GradeResult(0, False, (), False, b"", b"grader: the package under test is the submission's from the "
                        b"start: iniconfig\n", 0.1)
    assert early.package_before_runner and harness.fault_of(early, expect_pass=False, upstream=True) is None
    assert harness.fault_of(early, expect_pass=True, upstream=True) == ("the grader collected no test (pytest exit "
                                                                          "0): no output")


def test_a_tree_that_stops_a_runner_loading_its_package_has_failed_when_the_reference_started_it() -> None:
    """attrs 62bdbf234f (a harvest): its mutant broke ``attr``, which pytest-mypy-plugins' jsonschema imports while
    the runner loads, and every grade of the mutant said "the test runner cannot start ... NoSuchResource": a lane
    error, the exam not certified. The reference started the runner in the same image, so a mutant or a control
    that stops it has failed; the reference itself, and the base's run that derives the tests, stay faults."""
    from acx_oci.sandbox.graderboot import NO_RUNNER_EXIT

    stopped = GradeResult(NO_RUNNER_EXIT, False, (), False, b"", b"grader: the package under test is the "
                          b"submission's from the start: attr, attrs\ngrader: the test runner cannot start: import "
                          b"pytest and the environment's plugins: NoSuchResource: 'http://json-schema.org/'\n", 0.1)
    assert stopped.no_runner and stopped.package_before_runner
    assert harness.fault_of(stopped, expect_pass=False, upstream=True) is None  # a mutant, a control: failed
    assert harness.fault_of(stopped, expect_pass=False) is None  # an attack probe that stops the runner: failed
    assert harness.fault_of(stopped, expect_pass=True, upstream=True) is not None  # the reference: the harness's
    assert harness.fault_of(stopped, expect_pass=False, upstream=True, whole=True) is not None  # deriving: data


@needs_bwrap
def test_an_xfail_that_fails_is_what_upstream_asks_not_a_skip(tmp_path: Path) -> None:
    """Rule 2: junit's ``<skipped type="pytest.xfail">`` is an ``xfailed`` outcome, and a run whose other tests
    pass passes. On 8c6af49 it read as a skip and the run as not passing."""
    from acx_oci.sandbox import grade

    tests = tmp_path / "hidden"
    tests.mkdir()
    (tests / "test_x.py").write_text("import pytest\n\n\ndef test_ok():\n    assert True\n\n\n"
                                     "@pytest.mark.xfail(reason='upstream: later')\ndef test_later():\n    assert 0\n")
    (tmp_path / "ws").mkdir()
    got = grade(tmp_path / "ws", tests, time_seconds=60)
    assert {t.nodeid: t.outcome for t in got.tests} == {"tests.test_x::test_ok": "passed",
                                                        "tests.test_x::test_later": "xfailed"}
    assert got.passed and got.outcome("test_x.py::test_later") == "passed"


@needs_bwrap
def test_the_environments_plugins_load_and_the_workspaces_never_do(tmp_path: Path) -> None:
    """Rule 5: a fixture of a plugin the environment installs (anyio's ``anyio_backend``, in this suite's own
    Python) is there with autoload off; a ``pytest11`` entry point in the workspace is not read. On 8c6af49 the
    fixture was "not found"."""
    try:
        import anyio.pytest_plugin  # noqa: F401
    except ImportError:
        pytest.skip("anyio (its pytest plugin) is not installed in this Python")
    hostile = {"evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
               "evil-1.0.dist-info/entry_points.txt": "[pytest11]\nevil = evil_plugin\n",
               "evil_plugin.py": "def pytest_collection_modifyitems(items):\n    items.clear()\n",
               "calc.py": BASE_CALC}
    files = {"test_b.py": "def test_b(anyio_backend):\n    assert anyio_backend in ('asyncio', 'trio')\n",
             "acx-grader.json": json.dumps({"packages": ["calc"]})}
    got = _boot(tmp_path, files, sys.executable, workspace=hostile)
    assert got.passed, (got.stdout.decode()[-1500:], got.stderr.decode()[-800:])
    assert got.tests and all(t.nodeid.startswith("tests.test_b::test_b") for t in got.tests)  # evil cleared none


def test_pytest_settings_are_read_as_pytest_chooses_them_configuration_only() -> None:
    """Rule 5: pytest.ini wins over pyproject.toml, which wins over tox.ini and setup.cfg; only the keys that
    change collection, marks and warnings are kept (never addopts); an empty pytest.ini still wins."""
    toml = '[tool.pytest.ini_options]\nasyncio_mode = "auto"\nfilterwarnings = ["error", "ignore::UserWarning"]\n' \
           'xfail_strict = true\naddopts = "-p evil"\n'
    tox = "[pytest]\nmarkers =\n    net: needs network\n"
    assert pytestconf.settings({"pyproject.toml": toml, "tox.ini": tox}) == (
        {"asyncio_mode": "auto", "filterwarnings": "error\nignore::UserWarning", "xfail_strict": "true"},
        "pyproject.toml")
    assert pytestconf.settings({"tox.ini": tox, "setup.cfg": "[tool:pytest]\nxfail_strict = true\n"}) == (
        {"markers": "net: needs network"}, "tox.ini")
    assert pytestconf.settings({"pytest.ini": "", "pyproject.toml": toml}) == ({}, "pytest.ini")
    assert pytestconf.settings({"pyproject.toml": "not [toml"}) == ({}, None)


def test_a_missing_module_of_the_tree_is_told_from_one_of_the_environment() -> None:
    """Rule 5: "No module named 'tests.testapp'" is the repository's own tree (left out of the grader), not a
    dependency the environment lacks. On 8c6af49 it was dropped as "the package's own" and never named."""
    out = (b"E   ModuleNotFoundError: No module named 'tests.testapp'\n"
           b"E   ModuleNotFoundError: No module named 'flask'\n"
           b"E   ModuleNotFoundError: No module named 'coerce'\n")  # python-semver's docs/advanced/coerce.py
    gold = GradeResult(1, False, (TestOutcome("tests.tests.test_v::test_v", "error"),), True, out, b"", 0.1)
    facts = diagnosis.why_reference_fails(gold, ["tests/testapp/views.py", "app/__init__.py",
                                                 "docs/advanced/coerce.py"])
    assert facts["referenceMissingTreeModules"] == ["coerce", "tests.testapp"]
    assert facts["referenceMissingModules"] == ["flask"]
    assert "modules of the repository's own tree the grader did not get: coerce, tests.testapp" in facts["reason"]
