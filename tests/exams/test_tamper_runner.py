"""The runner-integrity layer against what honest environments do and what a submission can reach for (issue 46).

An environment's plugin may change the runner before any test runs: pytest-mock wraps ``unittest.mock``'s
assert methods at ``pytest_configure`` (and restores them at unconfigure). On 77a01f8 every in-process grade in
such an environment was void, the reference's too: filelock 13b82a6 "reference never passes" in 3 of 3 runs,
``runner: after collection: the runner changed: c:unittest.mock|AsyncMock.assert_any_await, ...``. The runner
the tests meet is now the one at the session's start, when none of the submission's code has run by then.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from acx_oci.sandbox import GRADER_CONFIG
from acx_oci.sandbox.grader import PYTHON
from acx_oci.sandbox.tamper import plant
from acx_oci.services.exams import source
from acx_oci.services.exams.inprocess_probes import inprocess_suite, verdict
from acx_oci.services.exams.inprocess_probes_deeper import LYING_EQ

from .test_tamper import _grade, exam, needs_bwrap  # noqa: F401  (the module-scoped calc exam fixture)

#: What pytest-mock does, from the hidden tree's conftest (as trusted as an environment plugin): a wrap at
#: configure, of a module imported after the guard's baseline.
WRAP_MOCK = '''import unittest.mock

_REAL = unittest.mock.NonCallableMock.assert_called_with


def _wrapped(self, *args, **kwargs):
    return _REAL(self, *args, **kwargs)


def pytest_configure(config):
    unittest.mock.NonCallableMock.assert_called_with = _wrapped
'''
#: The same without a kind word: the submission makes mock assertions vacuous.
VACUOUS_MOCK = "\nimport unittest.mock\nunittest.mock.NonCallableMock.assert_called_with = lambda *a, **k: None\n"


def _conftest(src: source.ExamSource, text: str) -> dict[str, str]:
    """The hidden files to add: a conftest.py, and the grader's settings that load it."""
    conf = json.loads(src.grader_files()[GRADER_CONFIG])
    return {"tests/conftest.py": text, GRADER_CONFIG: json.dumps({**conf, "conftest": True})}


@needs_bwrap
def test_pytest_mock_in_the_environment_leaves_an_honest_grade_a_pass(
        exam: source.ExamSource, tmp_path: Path) -> None:  # noqa: F811
    """pytest-mock (Debian's python3-pytest-mock, an environment plugin of the sandbox's Python here) wraps
    ``unittest.mock``'s assert methods at configure and restores them at unconfigure. Void on 77a01f8:
    ``runner: after collection: the runner changed: c:unittest.mock|AsyncMock.assert_any_await, ...``, the
    reference's grade too."""
    if subprocess.run([PYTHON, "-c", "import pytest_mock"], capture_output=True, check=False).returncode:
        pytest.skip("python3-pytest-mock not installed (scripts/test.sh installs it)")
    gold, _ = _grade(tmp_path / "gold", exam, {**exam.workspace, **exam.reference})
    assert gold.passed and gold.tamper == (), (gold.tamper, gold.stdout.decode()[-600:])
    # a conftest that imports the package under test: the submission ran before configure, so no change is
    # taken then; the grader turns pytest-mock's wrap off (its messages alone) rather than void every grade
    more = _conftest(exam, "import calc  # noqa: F401\n")
    gold, _ = _grade(tmp_path / "early", exam, {**exam.workspace, **exam.reference}, more)
    assert gold.passed and gold.tamper == (), (gold.tamper, gold.stdout.decode()[-600:])


@needs_bwrap
def test_a_hidden_conftest_that_wraps_the_runner_at_configure_leaves_an_honest_grade_a_pass(
        exam: source.ExamSource, tmp_path: Path) -> None:  # noqa: F811
    """The same from the hidden tree, with ``unittest.mock`` first imported after the baseline: void on
    77a01f8 (``c:unittest.mock|NonCallableMock.assert_called_with``); the base still fails as a plain fail."""
    more = _conftest(exam, WRAP_MOCK)
    gold, _ = _grade(tmp_path / "gold", exam, {**exam.workspace, **exam.reference}, more)
    assert gold.passed and gold.tamper == (), (gold.tamper, gold.stdout.decode()[-600:])
    base, _ = _grade(tmp_path / "base", exam, dict(exam.workspace), more)
    assert not base.passed and base.tamper == ()


#: pytest < 6's junitxml in small: a ``py.xml`` namespace of a runner module, whose tag classes py.xml makes
#: on first use and sets on the namespace (``Junit.testcase`` appears at the first test written).
OLD_JUNIT = '''import sys, types

import py
import pytest

_mod = types.ModuleType("_pytest.acx_old_junit")


class Junit(py.xml.Namespace):
    pass


Junit.__module__ = _mod.__name__
_mod.Junit = Junit
sys.modules[_mod.__name__] = _mod


@pytest.fixture(autouse=True)
def _write_a_testcase():
    yield
    Junit.testcase(name="x")
'''


@needs_bwrap
def test_a_tag_class_py_xml_makes_on_first_use_leaves_an_honest_grade_a_pass(
        exam: source.ExamSource, tmp_path: Path) -> None:  # noqa: F811
    """jmespath 8c0fc3e in its environment (pytest 3.0.7): every grade, the reference's too, was void with
    ``the runner changed: c:_pytest.junitxml|Junit.testcase``. py.xml makes that class at the first testcase
    written and sets it on the namespace: the runner's own addition. A tag class the submission plants there
    with code of its own (an ``__init__`` that writes a forged case) is still a change."""
    if subprocess.run([PYTHON, "-c", "import py.xml"], capture_output=True, check=False).returncode:
        pytest.skip("the sandbox's Python has no py.xml (python3-py)")
    more = _conftest(exam, OLD_JUNIT)
    gold, _ = _grade(tmp_path / "gold", exam, {**exam.workspace, **exam.reference}, more)
    assert gold.passed and gold.tamper == (), (gold.tamper, gold.stdout.decode()[-600:])
    for n, plant_it in enumerate(PLANTED_TAGS):
        tree = {**exam.workspace, **exam.reference}
        tree["calc.py"] += "\nimport sys as _s, py as _p\n_J = _s.modules['_pytest.acx_old_junit'].Junit\n" + plant_it
        planted, _ = _grade(tmp_path / f"planted-{n}", exam, tree, more)
        assert not planted.passed, plant_it
        assert any(t.startswith("runner:") and "Junit." in t for t in planted.tamper), (plant_it, planted.tamper)


#: Tag classes a submission plants (an attacker's review): with code of its own; of a Tag of its own, set as
#: py.xml's tag class so py.xml itself makes it; with an ``xmlname`` that is no plain string; an object whose
#: ``__class__`` says ``type`` (it made the check raise, and a raising check reports nothing).
PLANTED_TAGS = (
    "_J.testcase = type('testcase', (_p.xml.Tag,), {'__init__': lambda self, *a, **k: None})\n",
    "class _T(_p.xml.Tag):\n    def unicode(self, indent=2):\n        return '<forged/>'\n"
    "_p.xml.Namespace.__tagclass__ = _T\n_J.failure\n",
    "class _S(str):\n    pass\n_J.error = type('error', (_p.xml.Tag,), {'xmlname': _S('error')})\n",
    "class _L:\n    __class__ = property(lambda self: type)\n    def __call__(self):\n        pass\n_J.sneaky = _L()\n",
)


@needs_bwrap
def test_once_the_submission_ran_before_the_session_nothing_it_may_have_changed_is_taken_as_the_runner(
        exam: source.ExamSource, tmp_path: Path) -> None:  # noqa: F811
    """The hidden conftest imports the package under test, so the submission runs before the session starts:
    its import-time patch of ``unittest.mock`` is tampering, not the environment's configuration."""
    more = _conftest(exam, "import calc  # noqa: F401\n")
    tree = {**exam.workspace, **exam.reference}
    tree["calc.py"] += VACUOUS_MOCK
    graded, _ = _grade(tmp_path, exam, tree, more)
    assert not graded.passed
    assert any(t.startswith("runner:") and "NonCallableMock.assert_called_with" in t for t in graded.tamper)


@needs_bwrap
@pytest.mark.parametrize("name", ["runnerOwnNoop", "runnerOwnCodeSwap", "hookProxyRelay", "hookCallerExec"])
def test_the_runners_own_no_op_or_a_patched_hook_relay_is_seen_by_the_runner_layer(
        name: str, exam: source.ExamSource, tmp_path: Path) -> None:  # noqa: F811
    """``Function.runtest = Node.setup`` (a no-op of pytest's own): on 77a01f8 the runner layer took any
    function of the runner's code as the runner's and a ``__code__`` swap to the runner's code as harmless, so
    only the honeypots saw it. The session's own ``gethookproxy`` (every item's ``ihook``) or a hook caller's
    ``_hookexec`` answering ``pytest_runtest_call`` with a no-op: on 81c7330 the runner layer saw neither (an
    attacker's). Each layer must see it alone: the guard's own call check never ran for a test that passed."""
    graded, _ = _grade(tmp_path, exam, inprocess_suite(exam.workspace, ["calc"])[name])
    assert verdict(graded) == "void" and not graded.passed
    seen = "Function.runtest" if name.startswith("runner") else "never reached the runner's hook"
    assert any(t.startswith("runner:") and seen in t for t in graded.tamper), graded.tamper


@needs_bwrap
@pytest.mark.parametrize("name", ["reportDescriptor", "runnerGlobalSwap"])
def test_a_patch_the_snapshot_did_not_hold_is_seen_by_the_runner_layer(
        name: str, exam: source.ExamSource, tmp_path: Path) -> None:  # noqa: F811
    """A data descriptor on ``TestReport`` (every outcome reads "passed") and ``_pytest.runner.TestReport``
    rebound to a subclass that passes every report: on 8b85e96 the snapshot held only the functions,
    properties and methods a runner module or class defines, so only the honeypots saw either."""
    graded, _ = _grade(tmp_path, exam, inprocess_suite(exam.workspace, ["calc"])[name])
    assert verdict(graded) == "void" and not graded.passed
    assert any(t.startswith("runner:") and "TestReport" in t for t in graded.tamper), graded.tamper


#: What a run could read to tell the real run from the honeypot run on 81c7330 (an attacker's): /grader-out was
#: made with the real run, just after /grader/pytest.ini; the honeypot run's a run later. (The attacker's inode
#: switch, /grader-out's inode one past pytest.ini's, now tells at most a run's place in an order drawn at
#: random: docs/security.md says what that leaves.)
SWITCHES = {"mtime": '_o.stat("/grader-out").st_mtime - _o.stat("/grader/pytest.ini").st_mtime < 0.3'}


@needs_bwrap
@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_a_submission_cannot_tell_the_real_run_from_the_honeypot_run(
        switch: str, exam: source.ExamSource, tmp_path: Path) -> None:  # noqa: F811
    """A package whose results equal anything (nothing of the runner changes) in the run it takes for the real
    one, honest in the other: a certified pass on 81c7330. Each run is now staged afresh just before it (its own
    workspace copy, /grader and /grader-out), in an order drawn at random: the switch reads the same in both,
    so the package forges both and the honeypots see it."""
    body = "\n".join("    " + line for line in LYING_EQ.splitlines())
    tree = {**exam.workspace, "calc.py": exam.workspace["calc.py"] + f"\nimport os as _o\nif {SWITCHES[switch]}:\n"
            + body + "\n"}
    for attempt in range(3):  # which run is real is drawn each grade
        graded, _ = _grade(tmp_path / str(attempt), exam, tree)
        assert not graded.passed, (switch, graded.tamper)
        assert any(t.startswith("honeypot:") for t in graded.tamper), graded.tamper


def test_a_test_name_two_classes_define_carries_no_honeypot() -> None:
    """more-itertools 4bd0bd8762: ``PeekableTests.test_indexing`` carried a honeypot, and
    ``SequenceViewTests.test_indexing`` (unchanged, the same junit name ``module::test_indexing``) passed in the
    honeypot run: "a hidden test every honest run fails passed", the reference's grade void (on 2dbe45c)."""
    text = ("import unittest\n\n\nclass PeekableTests(unittest.TestCase):\n    def test_indexing(self):\n"
            "        self.assertEqual(abs(-1), 1)\n\n\nclass ViewTests(unittest.TestCase):\n"
            "    def test_indexing(self):\n        self.assertEqual(abs(-2), 2)\n\n    def test_len(self):\n"
            "        self.assertEqual(len('ab'), 2)\n")
    for _ in range(10):  # honeypots are drawn at random: test_len is the only one that can be
        assert plant({"tests/test_more.py": text}, {}).honeypots == ("tests/test_more.py::ViewTests::test_len",)


@needs_bwrap
@pytest.mark.parametrize("name", ["hookProxyRelay", "hookCallerExec"])
def test_a_relay_of_another_hook_is_seen_though_every_call_reached_the_runner(
        name: str, exam: source.ExamSource, tmp_path: Path) -> None:  # noqa: F811
    """The same relays aimed at ``pytest_pyfunc_call`` (answered ``True``: the test function never runs),
    so that every test's call still reaches the guard's wrapper: no runner finding on e87672e (a reviewer's,
    run outside the sandbox). The relay itself is now checked against the classes."""
    code = inprocess_suite(exam.workspace, ["calc"])[name]["calc.py"].replace(
        '"pytest_runtest_" + "call"', '"pytest_pyfunc_" + "call"').replace(
        "lambda **kw: None", "lambda **kw: True").replace("lambda name, impls, kwargs, first: None",
                                                         "lambda name, impls, kwargs, first: True")
    assert code.count("pytest_pyfunc_") == 1
    graded, _ = _grade(tmp_path, exam, {**exam.workspace, "calc.py": code})
    assert not graded.passed
    assert any(t.startswith("runner:") and "hook relay" in t for t in graded.tamper), graded.tamper


#: What freezegun does in humanize's tests: ``unittest.IsolatedAsyncioTestCase`` first read after collection,
#: which Python's unittest binds on its module then (a module ``__getattr__``).
LAZY_ASYNC_CASE = '''import pytest


@pytest.fixture(autouse=True)
def _touch_async_case():
    yield
    import unittest
    unittest.IsolatedAsyncioTestCase
'''


@needs_bwrap
def test_unittests_lazy_async_case_leaves_an_honest_grade_a_pass(
        exam: source.ExamSource, tmp_path: Path) -> None:  # noqa: F811
    """humanize a47a89ea91 (2026-02-22): the reference passed 383 of 383 tests and was void 3 of 3 times,
    ``the runner changed: g:unittest|IsolatedAsyncioTestCase`` (read as "reference never passes"). A class of
    the runner's own modules that a runner module binds later is the runner's; one of the submission's bound
    there, or a runner class replaced, is still a change."""
    more = _conftest(exam, LAZY_ASYNC_CASE)
    gold, _ = _grade(tmp_path / "gold", exam, {**exam.workspace, **exam.reference}, more)
    assert gold.passed and gold.tamper == (), (gold.tamper, gold.stdout.decode()[-600:])
    for n, plant_it in enumerate(("import unittest as _u\nclass _C:\n    pass\n_u.AcxPlanted = _C\n",
                                  "import unittest as _u\n_u.TestCase = type('TestCase', (), {})\n")):
        tree = {**exam.workspace, **exam.reference}
        tree["calc.py"] += "\n" + plant_it
        planted, _ = _grade(tmp_path / f"planted-{n}", exam, tree, more)
        assert not planted.passed and any(t.startswith("runner:") for t in planted.tamper), (plant_it,
                                                                                              planted.tamper)


def test_a_void_reference_says_it_was_void_not_that_it_failed_nothing() -> None:
    """The record said "the reference fails 0 of its 383 graded tests" for a grade the tamper checks voided."""
    from acx_oci.sandbox import GradeResult, TestOutcome
    from acx_oci.services.exams.diagnosis import why_reference_fails

    tests = (TestOutcome("tests/test_x.py::test_a", "passed"),)
    void = GradeResult(0, False, tests, True, b"1 passed", b"", 1.0,
                       tamper=("runner: after collection: the runner changed: g:x|y",))
    facts = why_reference_fails(void, ["calc.py"])
    assert "the grade was void: the tamper checks fired (runner: after collection" in facts["reason"]
    assert facts["referenceVoid"] == ["runner: after collection: the runner changed: g:x|y"]
    odd = why_reference_fails(GradeResult(1, False, tests, True, b"", b"", 1.0), ["calc.py"])
    assert "pytest exited 1 though no graded test failed" in odd["reason"]


#: What cloudpickle does to a class a hidden helper made (attrs' ``tests/strategies.py``): a fresh copy of the
#: helper's local function, set to the defaults it has (None). Nothing changes.
COPY_AS_IT_WAS = '''import types


def _make():
    def init(self, *args, **kwargs):
        return None
    return init


_copy = types.FunctionType(_make().__code__, {}, "init", None, None)
_copy.__kwdefaults__ = None
_copy.__defaults__ = None
_copy.__code__ = _copy.__code__
'''


@needs_bwrap
def test_a_write_that_changes_nothing_on_a_hidden_function_leaves_an_honest_grade_a_pass(
        exam: source.ExamSource, tmp_path: Path) -> None:  # noqa: F811
    """attrs 597c3a8adb's reference was void in 3 of 3 runs: "object.__delattr__ on the hidden test
    simple_classes.<locals>.init: __kwdefaults__" (cloudpickle setting a copy's None defaults to None). A write
    that changes a hidden function still voids the grade."""
    gold, _ = _grade(tmp_path / "gold", exam, {**exam.workspace, **exam.reference}, _conftest(exam, COPY_AS_IT_WAS))
    assert gold.passed and gold.tamper == (), (gold.tamper, gold.stdout.decode()[-600:])
    changed = COPY_AS_IT_WAS + "_make.__defaults__ = (1,)\n"
    gold, _ = _grade(tmp_path / "changed", exam, {**exam.workspace, **exam.reference}, _conftest(exam, changed))
    assert not gold.passed and any("on the hidden test _make: __defaults__" in t for t in gold.tamper), gold.tamper
