"""Probes that fail for different reasons (issue 46, rule 6): the incomplete and the lookalike probe of an imported
exam are chosen so that the hidden tests tell them apart — by their failing tests, else by the failing assertion
— and an exam whose tests tell nothing apart certifies under a relaxation its record names."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from acx_oci.model import exam_record as xr
from acx_oci.sandbox import GradeResult, TestOutcome
from acx_oci.sandbox.failures import failed_at
from acx_oci.services.artifacts.certification import relaxations_of
from acx_oci.services.exams.controls import BY_ASSERTION, BY_TESTS, NOT_DISTINGUISHED, best_pair, distinction

from ..support.cli import cli
from .test_exam_import import BASE_CALC, commit, git, make_repo, patch

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


def _graded(*cases: tuple[str, str, str]) -> GradeResult:
    tests = tuple(TestOutcome(n, o, w) for n, o, w in cases)
    bad = any(o != "passed" for _, o, _ in cases)
    return GradeResult(1 if bad else 0, False, tests, True, b"", b"", 0.1)


FAIL_A = _graded(("t::a", "failed", "tests/t.py:3 AssertionError"), ("t::b", "passed", ""))
FAIL_B = _graded(("t::a", "passed", ""), ("t::b", "failed", "tests/t.py:7 AssertionError"))
FAIL_A_LATER = _graded(("t::a", "failed", "tests/t.py:4 AssertionError"), ("t::b", "passed", ""))
FAIL_A_TYPE = _graded(("t::a", "failed", "tests/t.py:3 TypeError"), ("t::b", "passed", ""))
PASS = _graded(("t::a", "passed", ""), ("t::b", "passed", ""))


def test_the_reason_two_probes_differ_is_read_from_their_failures() -> None:
    """Fails on 8c6af49: there is no reason beyond the failing test sets (no ``controls`` module, no place)."""
    assert distinction(FAIL_A, FAIL_B) == BY_TESTS
    assert distinction(FAIL_A, FAIL_A_LATER) == BY_ASSERTION  # same test, another assertion
    assert distinction(FAIL_A, FAIL_A_TYPE) == BY_ASSERTION  # same line, another exception
    assert distinction(FAIL_A, FAIL_A) is None
    assert distinction(FAIL_A, PASS) is None  # a grade the tests pass is no probe
    report = ("def test_two():\n>       assert f(1) == 1\n\ntests/test_a.py:6: \n_ _ _\n\n    def f(x):\n"
              ">           raise ValueError('bad')\nE           ValueError: bad\n\n/workspace/m.py:3: ValueError")
    assert failed_at(report) == "tests/test_a.py:6 ValueError"
    gone = ">   ???\nE   assert -1 == 0\n\n/tmp/acx-grader/tests/test_sign.py:8: AssertionError"  # file deleted
    assert failed_at(gone) == "tests/test_sign.py:8 AssertionError"
    assert failed_at("no traceback here") == ""


def test_the_pair_with_the_strongest_reason_is_taken_not_the_first() -> None:
    """Fails on 8c6af49 (no ``best_pair``): the first two killed mutants failing alike were taken as the pair."""
    grades = {"m1": FAIL_A, "m2": FAIL_A, "m3": FAIL_A_LATER, "m4": FAIL_B}
    pair = best_pair(["m1", "m2", "m3", "m4"], iter(["m1", "m2", "m3", "m4"]), grades.__getitem__)
    assert pair is not None and (pair.lookalike, pair.incomplete, pair.by) == ("m4", "m1", BY_TESTS)
    pair = best_pair(["m1", "m2", "m3"], iter(["m1", "m2", "m3"]), grades.__getitem__)
    assert pair is not None and pair.by == BY_ASSERTION and {pair.lookalike, pair.incomplete} == {"m1", "m3"}
    pair = best_pair(["m1"], iter(["m1"]), grades.__getitem__)  # one killed mutant stands for both
    assert pair is not None and pair.by is None
    assert best_pair([], iter([]), grades.__getitem__) is None


SIGN = BASE_CALC.replace("def sign(x):\n    return 1\n",
                         "def sign(x):\n    if x == 0:\n        return 0\n    return 1 if x > 0 else -1\n")
CLAMP = BASE_CALC.replace("    return x\n", "    return max(lo, min(hi, x))\n")
#: One test, three assertions: mutants of the fix fail it at different lines.
ONE_TEST = ("from calc import sign\n\n\ndef test_sign():\n    assert sign(0) == 0\n    assert sign(-3) == -1\n"
            "    assert sign(4) == 1\n")
#: One test, one assertion: every wrong answer fails it the same way.
ONE_ASSERT = "from calc import clamp\n\n\ndef test_low():\n    assert clamp(-5, 0, 10) == 0\n"
TWO_CLAMP = ONE_ASSERT + "\n\ndef test_high():\n    assert clamp(50, 0, 10) == 10\n"
#: The fix's last hunk is a comment: the fix without it still passes (a derived incomplete that is no probe).
CLAMP_NOTED = CLAMP.replace("def sign(x):\n", "def sign(x):\n    # the sign of zero is 1 here\n")


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Four one-fix exams in one suite, certified together on the host's Python."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    tmp = tmp_path_factory.mktemp("pairs")
    repo = tmp / "r"
    shas = make_repo(repo)
    fixes: dict[str, tuple[str, Path | None]] = {}
    for branch, files in (("one-test", {"calc.py": SIGN, "tests/test_sign.py": ONE_TEST}),
                          ("one-assert", {"calc.py": CLAMP, "tests/test_low.py": ONE_ASSERT}),
                          ("look-one-hunk", {"calc.py": SIGN, "tests/test_sign.py": ONE_TEST.replace(
                              "def test_sign():\n    assert sign(0) == 0\n",
                              "def test_zero():\n    assert sign(0) == 0\n\n\ndef test_sign():\n")}),
                          ("look-redundant", {"calc.py": CLAMP_NOTED, "tests/test_clamp.py": TWO_CLAMP})):
        git(repo, "checkout", "-q", "-b", branch, shas["base"])
        fixes[branch] = (commit(repo, files, f"fix {branch}", "2026-03-12T10:00:00Z"), None)
    near_sign = tmp / "near-sign.patch"  # sign right for zero, wrong for negatives
    near_sign.write_text(patch("calc.py", BASE_CALC, BASE_CALC.replace(
        "def sign(x):\n    return 1\n", "def sign(x):\n    if x == 0:\n        return 0\n    return 1\n")))
    near_clamp = tmp / "near-clamp.patch"  # the upper bound only
    near_clamp.write_text(patch("calc.py", BASE_CALC, BASE_CALC.replace("    return x\n", "    return min(hi, x)\n")))
    suite = tmp / "suite"
    imports = {}
    for eid, look in (("one-test", None), ("one-assert", None), ("look-one-hunk", near_sign),
                      ("look-redundant", near_clamp)):
        extra = ("--lookalike", look) if look else ()
        res = cli("exam", "import", "--classification", "public",
                  "--repo", repo, "--base", shas["base"], "--fix", fixes[eid][0], "--id", eid,
                  "-o", suite, *extra)
        imports[eid] = res
    cert = cli("exam", "certify", suite, "--out", tmp / "certs", "--jobs", "2", "--json", "--no-environments")
    records = {r["exam"]: r for r in json.loads(cert.stdout)["records"]} if cert.stdout.startswith("{") else {}
    return {"imports": imports, "records": records, "cert": cert, "suite": suite}


@needs_bwrap
def test_a_single_hidden_test_tells_probes_apart_by_the_failing_assertion(certified: dict[str, Any]) -> None:
    """Fails on 8c6af49: its mutants all fail the one test, so the record said controlsDistinguished false and
    took the first two killed mutants whatever they failed at."""
    rec = certified["records"]["one-test"]
    grader = rec["stages"]["grader"]
    assert rec["certified"] is True, xr.failures(rec)
    assert grader["distinguishedBy"] == BY_ASSERTION and grader["controlsDistinguished"] is True
    assert "relaxations" not in grader
    assert grader["failing"]["incomplete"] == grader["failing"]["lookalike"] == ["test_sign"]
    assert set(grader["chosen"]) == {"incomplete", "lookalike"} and len(set(grader["chosen"].values())) == 2


@needs_bwrap
def test_tests_that_tell_nothing_apart_certify_under_a_named_relaxation(certified: dict[str, Any]) -> None:
    """Fails on 8c6af49: the exam certified with one mutant as both probes and nothing in its record said so."""
    rec = certified["records"]["one-assert"]
    grader = rec["stages"]["grader"]
    assert rec["certified"] is True, xr.failures(rec)
    assert grader["controlsDistinguished"] is False and grader["distinguishedBy"] is None
    assert grader["relaxations"] == [NOT_DISTINGUISHED]
    assert xr.check_record(rec) == [] and relaxations_of(rec) == [NOT_DISTINGUISHED]  # the certification says so


@needs_bwrap
def test_a_hand_made_lookalike_takes_its_incomplete_from_the_mutants(certified: dict[str, Any]) -> None:
    """Fails on 8c6af49: the import was refused ("the fix has one source hunk and no mutable Python line, so no
    incomplete fix can be derived") although the fix has mutants."""
    assert certified["imports"]["look-one-hunk"].exit_code == 0, certified["imports"]["look-one-hunk"].output
    rec = certified["records"]["look-one-hunk"]
    grader = rec["stages"]["grader"]
    assert rec["certified"] is True, xr.failures(rec)
    assert list(grader["chosen"]) == ["incomplete"] and grader["chosen"]["incomplete"].startswith("mutant-")
    assert grader["distinguishedBy"] == BY_TESTS and grader["failing"]["lookalike"] == ["test_sign"]
    source = json.loads((certified["suite"] / "tasks" / "look-one-hunk" / "source.json").read_text())
    assert source["handControls"] == ["lookalike"]


@needs_bwrap
def test_a_derived_incomplete_the_tests_pass_gives_its_place_to_a_killed_mutant(certified: dict[str, Any]) -> None:
    """Fails on 8c6af49: with a human's lookalike no mutant was written, so the fix without its last hunk (a
    comment) stood as the incomplete probe, passed the hidden tests, and the exam was refused."""
    rec = certified["records"]["look-redundant"]
    grader = rec["stages"]["grader"]
    assert rec["certified"] is True, xr.failures(rec)
    assert grader["incompleteReplaced"] == "the fix without its last hunk passes the hidden tests"
    assert grader["chosen"]["incomplete"].startswith("mutant-") and grader["controls"]["incomplete"] == "F"
    assert grader["distinguishedBy"] == BY_TESTS
