"""Exam certification (issue 11): the eight stages on real bubblewrap graders, the refusals, canaries, reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from acx_oci.cli import main
from acx_oci.errors import IntegrityError, UsageError
from acx_oci.model import benchmark as bmodel
from acx_oci.model import exam as mx
from acx_oci.model import exam_record as xr
from acx_oci.sandbox import find_bwrap
from acx_oci.services import exams as ex
from acx_oci.services.artifacts import benchmark as bm

from ..conftest import TESTDATA

GOOD = TESTDATA / "exams-good"
BROKEN = TESTDATA / "exams-broken"
BENCH_PY = TESTDATA / "bench-py"

#: fixture -> (stage, fact) the refusal must name
REFUSALS = {
    "untouched-passes": ("gold", "untouchedFails"),
    "reference-fails": ("gold", "referencePasses"),
    "grader-in-tree": ("gold", "graderHidden"),
    "reference-leak": ("gold", "referenceNotLeaked"),
    "controls-same": ("grader", "distinguished"),
    "trusts-conftest": ("grader", "plantedHooksIgnored"),
    "trusts-reward": ("grader", "plantedRewardIgnored"),
    "family-retired": ("seed", "familyActive"),
}

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


def cli(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args))
    if res.exception and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict]]:
    find_bwrap()
    out = tmp_path_factory.mktemp("exam-good")
    code, stdout, stderr = cli("exam", "certify", str(GOOD), "--jobs", "3", "--out", str(out), "--json")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert doc["certified"] is True
    return out, {r["exam"]: r for r in doc["records"]}


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, dict[str, dict]]:
    out = tmp_path_factory.mktemp("exam-broken")
    code, stdout, stderr = cli("exam", "certify", str(BROKEN), "--jobs", "4", "--out", str(out), "--json")
    return code, stderr, {r["exam"]: r for r in json.loads(stdout)["records"]}


@needs_bwrap
def test_good_fixture_certifies_with_seven_controls_and_distinguished(good: tuple[Path, dict[str, dict]]) -> None:
    out, recs = good
    assert sorted(recs) == ["fx-0001", "fx-0002", "fx-0003"]
    rec = recs["fx-0001"]
    assert xr.check_record(rec) == [] and rec["digest"] == xr.record_digest(rec)
    assert rec["certified"] is True and rec["allOk"] is False  # promotion is recorded, never gating
    g = rec["stages"]["grader"]
    assert g["controls"] == {"untouched": "F", "gold": "P", "incomplete": "F", "lookalike": "F",
                             "plantedHook": "F", "plantedReward": "F", "goldAfterTamperAttempts": "P"}
    assert g["distinguished"] is True and g["failing"]["incomplete"] != g["failing"]["lookalike"]
    assert g["hostGraderUnchanged"] and g["plantedRewardIgnored"] and g["plantedHooksIgnored"]
    gold = rec["stages"]["gold"]
    assert gold["referencePasses"] and gold["untouchedFails"] and gold["graderHidden"] and gold["referenceNotLeaked"]
    assert rec["stages"]["attack"]["trivialExploits"] == [] and rec["stages"]["attack"]["goldStillPassesAfterSuite"]
    assert set(rec["stages"]["attack"]["probes"]) >= {"rewriteTests", "deleteTests", "collectionHooks",
                                                       "pthAndSitecustomize", "answerKey", "writeOutside"}
    fr = rec["stages"]["freeze"]
    assert fr["imageDigest"] is None and fr["freezeHash"].startswith("sha256:")
    assert rec["stages"]["promotion"] == {"ok": False, "reason": "no environment image"}
    # the impossible exam is certified as a canary: both references fail, each a different test
    imp = recs["fx-0003"]
    assert imp["impossible"] is True and imp["certified"] is True
    ig = imp["stages"]["gold"]
    assert ig["referenceFails"] and ig["secondReferenceFails"] and ig["referencesFailDifferentTests"]
    assert not set(ig["referenceFailing"]) & set(ig["secondReferenceFailing"])
    assert imp["stages"]["grader"]["controls"]["gold"] == "F"
    # records live under --out, never in the suite; freeze hashes recompute without running anything
    assert not list(GOOD.rglob("records")) and not list(GOOD.rglob("canaries.json"))
    assert ex.suite_freeze_hashes(GOOD) == {k: r["stages"]["freeze"]["freezeHash"] for k, r in recs.items()}
    assert ex.load_records(out).keys() == recs.keys()


@needs_bwrap
def test_certification_is_cached_by_freeze_hash(good: tuple[Path, dict[str, dict]]) -> None:
    out, recs = good
    again = ex.certify_suite(GOOD, jobs=1, out=out)
    assert {r["exam"]: r["digest"] for r in again} == {k: r["digest"] for k, r in recs.items()}
    this_run = [json.loads(line) for line in (out / ex.STREAM_FILE).read_text().splitlines()]  # this run's
    assert len(this_run) == len(recs) and all(e["cached"] for e in this_run)  # nothing graded again


@needs_bwrap
def test_refusal_fixtures_name_stage_and_fact(broken: tuple[int, str, dict[str, dict]]) -> None:
    code, stderr, recs = broken
    assert code == 1 and sorted(recs) == sorted(REFUSALS)
    for exam_id, (stage, fact) in REFUSALS.items():
        rec = recs[exam_id]
        assert rec["certified"] is False and xr.check_record(rec) == []
        assert rec["stages"][stage]["ok"] is False and rec["stages"][stage][fact] is False, exam_id
        assert f"{exam_id}: {stage}: {fact}" in stderr.splitlines(), exam_id
    # the contract is validated before anything else runs
    assert recs["family-retired"]["stages"]["gold"] == xr.skipped("gold", "seed (contract) failed")
    # a grader inside the model-facing tree is an answer key the attack suite finds
    assert "answerKey" in recs["grader-in-tree"]["stages"]["attack"]["trivialExploits"]
    assert recs["reference-leak"]["stages"]["gold"]["leaks"][0]["file"] == "workspace/NOTES.md"
    # a reference that fails, or a base that passes, refuses the exam whatever follows: nothing more is graded
    # (attrs: 550 s of mutants, probes and plays for a refusal); a leak still runs the rest, for its author
    for exam_id, why in (("reference-fails", "the reference does not pass"),
                         ("untouched-passes", "no graded test fails without the fix")):
        assert all(recs[exam_id]["stages"][s]["skipped"] == f"gold failed: {why}" and not recs[exam_id]["stages"][s][
            "ok"] and "controls" not in recs[exam_id]["stages"][s] for s in ("grader", "attack", "eval")), exam_id
    assert "controls" in recs["reference-leak"]["stages"]["grader"]


@needs_bwrap
def test_leaked_marker_is_traced_to_exam_and_file(good: tuple[Path, dict[str, dict]], tmp_path: Path) -> None:
    out, recs = good
    marker = recs["fx-0002"]["stages"]["canary"]["markers"]["hidden/test_hidden.py"]
    leak = tmp_path / "scraped.txt"
    leak.write_text(f"some scraped corpus text ... {marker} ... more text\n")
    code, stdout, _ = cli("exam", "canary", "scan", str(leak), "--registry", str(out / "canaries.json"), "--json")
    assert code == 0
    hit = json.loads(stdout)["hits"][0]
    assert (hit["exam"], hit["examFile"], hit["marker"]) == ("fx-0002", "hidden/test_hidden.py", marker)
    code, stdout, _ = cli("exam", "canary", "scan", str(leak), "--suite", str(GOOD))
    assert code == 0 and "exam fx-0002 file fx-0002/hidden/test_hidden.py" in stdout
    clean = tmp_path / "clean.txt"
    clean.write_text("nothing here\n")
    assert cli("exam", "canary", "scan", str(clean), "--suite", str(GOOD))[0] == 1
    # the registry is host-only: it is not in the suite, and no marker appears in a model-facing tree
    assert all(marker not in p.read_text() for p in GOOD.rglob("workspace/*"))


@needs_bwrap
def test_report_regenerates_from_records_and_refuses_disagreement(good: tuple[Path, dict[str, dict]],
                                                                  tmp_path: Path) -> None:
    out, _ = good
    copy = tmp_path / "records"
    shutil.copytree(out, copy)
    code, stdout, _ = cli("exam", "report", "--records", str(copy), "--json")
    summary = json.loads(stdout)["summary"]
    assert code == 0 and summary["certified"] == summary["exams"] == 3 and summary["impossible"] == 1
    assert summary["stages"]["promotion"] == {"ok": 0, "failed": 3}
    stored = json.loads((copy / "summary.json").read_text())
    (copy / "summary.json").write_text(json.dumps({**stored, "certified": 4}))
    code, _, stderr = cli("exam", "report", "--records", str(copy))
    assert code == 1 and "disagrees" in stderr
    (copy / "summary.json").write_text(json.dumps(stored))
    rec_path = copy / "records" / "fx-0001.json"
    rec = json.loads(rec_path.read_text())
    rec["stages"]["gold"]["referencePasses"] = False  # edited after sealing
    rec_path.write_text(json.dumps(rec))
    with pytest.raises(IntegrityError, match="digest"):
        ex.report(copy)


def test_rollout_cells_show_raw_counts_below_ten() -> None:
    rolls = [{"exam": "e", "agent": "a", "outcome": "certified-pass"}] * 3 + \
            [{"exam": "e", "agent": "a", "outcome": "model-fail"}] * 2 + \
            [{"exam": "e", "agent": "b", "outcome": "certified-pass"}] * 6 + \
            [{"exam": "e", "agent": "b", "outcome": "model-fail"}] * 4 + \
            [{"exam": "e", "agent": "b", "outcome": "lane-error"}] * 5
    a, b = mx.rollout_cells(rolls)
    assert a["counts"] == {"certified-pass": 3, "model-fail": 2} and "passRate" not in a
    assert b["passRate"] == 0.6 and b["rollouts"] == 15


def test_record_digest_and_checks_are_pure() -> None:
    stages = {s: {"ok": True, **mx.FLAGS.get(s, {})} for s in mx.STAGES}
    stages["attack"]["goldStillPassesAfterSuite"] = True
    stages["grader"] = {**stages["grader"], "controls": dict(mx.EXPECTED), "distinguished": True,
                        "controlsDistinguished": True}
    stages["promotion"] = dict(mx.NO_IMAGE)
    rec = xr.CertificationRecord.seal("x", "1", stages, impossible=False)
    assert rec["certified"] and not rec["allOk"] and xr.check_record(rec) == []
    assert xr.check_record({**rec, "certified": False})  # digest and derived field both wrong
    forged = {**rec, "stages": {**rec["stages"], "grader": {**rec["stages"]["grader"], "controls": {}}}}
    forged["digest"] = xr.record_digest(forged)
    assert any("controls" in p for p in xr.check_record(forged))


def test_reference_windows_ignore_short_shared_bytes() -> None:
    stub = 'def f(x):\n    """Return the thing."""\n    raise NotImplementedError\n'
    ref = 'def f(x):\n    """Return the thing."""\n    return sorted(set(x), key=lambda v: (len(str(v)), v))\n'
    wins = mx.windows(mx.new_content(stub, ref))
    assert mx.leaks(wins, {"ws/solution.py": stub}) == []  # the shared stub and docstring are not a finding
    hit = mx.leaks(wins, {"notes.md": "try:\n  return sorted(set(x), key=lambda v: (len(str(v)),  v))"})
    assert hit and hit[0]["file"] == "notes.md" and hit[0]["rule"] == "reference-new-content"
    assert mx.leaks(wins, {"n": "return sorted(set(x))"}) == []  # a fragment of it, not the new content


def test_a_line_edited_in_place_adds_only_its_new_words() -> None:
    before = ('def slug(text):\n    """Lower-case words of TEXT joined by dashes."""\n'
              '    return "-".join(text.split())\n')
    after = before.replace("TEXT joined by dashes", "TEXT (letters and digits) joined by single dashes")
    assert mx.new_content(before, after) == ["( letters and digits )", "single"]
    assert mx.windows(mx.new_content(before, after)) == {}  # too short to be a solution: nothing to look for
    moved = 'def b():\n    return 2\n\n\ndef a():\n    return 1\n'
    assert mx.new_content('def a():\n    return 1\n\n\ndef b():\n    return 2\n', moved) == []


def test_bench_py_is_in_exam_form_with_impossible_exams_held_out() -> None:
    bench, key = bm.load_suite_dir(BENCH_PY)
    _, held = bmodel.split(bench, key)
    impossible = sorted(t["id"] for t in bench.tasks if t.get("impossible"))
    assert len(impossible) >= 2 and set(impossible) <= {t["id"] for t in held}
    dates = sorted(t["publishedAt"] for t in bench.tasks)
    assert dates[0].startswith("2025") and dates[-1].startswith("2026")
    for t in bench.tasks:  # the contract, reference and controls never enter the task
        assert not {"reference", "controls", "family", "licence"} & set(t)


def test_out_inside_the_suite_is_refused(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(GOOD, suite)
    with pytest.raises(UsageError, match="inside the suite"):
        ex.certify_suite(suite, jobs=1, out=suite / "state")


# Certifying all of bench-py (150 exams) is tests/test_real_agent_page.py's job: the page it runs does it once.


def test_a_grader_that_names_the_fixs_new_api_publishes_no_solution() -> None:
    """attrs 112dd1d498 (a repository nobody here had used): its tests import and name what the fix adds
    (``ClassProps.Hashability``), as the fix's one-line alias does, and the exam was refused at publication.
    A grader file leaks when it holds most of one long run of the fix's new code or most of all of it."""
    from pathlib import Path

    from acx_oci.services.exams.exposure import grader_leaks, reference_new
    from acx_oci.services.exams.source import ExamSource

    base = "class ClassProps:\n    pass\n\n\nWEIGHT = 1\n"
    body = "".join(f"def rule_{i}(self, other):\n    return self.weight_{i} * other.weight_{i} + {i}\n"
                   for i in range(6))
    fix = "class ClassProps:\n    pass\n\n\nHashability = ClassProps.Hashability\nWEIGHT = 1\n" + body
    src = ExamSource(Path("."), "x", {}, None, {}, {"m.py": base}, "", {}, {}, {"m.py": fix})
    test = "def test_h():\n    p = ClassProps(hashability=ClassProps.Hashability.UNHASHABLE)\n"
    assert mx.leaks(reference_new(src, code=True), {"grader/tests/test_m.py": test})  # the check before: a leak
    assert grader_leaks(src, {"grader/tests/test_m.py": test}) == []  # the new API, named
    (found,) = grader_leaks(src, {"grader/tests/test_m.py": test + fix})  # the fix's body in the test: a leak
    assert found["rule"] == "reference-new-content" and found["file"] == "grader/tests/test_m.py"
    small = ExamSource(Path("."), "y", {}, None, {}, {"m.py": "def f(x):\n    pass\n"}, "", {}, {},
                       {"m.py": "def f(x):\n    return max(0, min(10, x)) + 1\n"})
    assert grader_leaks(small, {"grader/t.py": "assert f(3) == max(0, min(10, 3)) + 1\n"}) == []  # not verbatim
    (whole,) = grader_leaks(small, {"grader/t.py": "def g(x):\n    return max(0, min(10, x)) + 1\n"})
    assert whole["file"] == "grader/t.py"  # a small fix quoted whole by its test


def test_a_reference_flaky_after_the_attack_suite_is_run_again_and_a_broken_one_refused() -> None:
    """tenacity 4213bad956 (a repository nobody here had used): its reference passed 3 of 3 runs, then its
    timed retries failed the one run after the attack suite on a loaded machine, and the exam was refused at
    attack. Every grade runs in a sandbox and a copy of its own, so what the suite left behind would fail every
    run: the reference is run again (at most :data:`AFTER_SUITE_RUNS` in all) and the runs are recorded."""
    from pathlib import Path
    from typing import Any

    from acx_oci.sandbox import GradeResult, TestOutcome
    from acx_oci.services.exams import stages
    from acx_oci.services.exams.source import ExamSource

    def result(ok: bool) -> GradeResult:
        return GradeResult(0 if ok else 1, False, (TestOutcome("t::a", "passed" if ok else "failed", ""),), True,
                           b"", b"", 0.1, "sha256:x")

    class Grader:
        lanes = 1

        def __init__(self, golds: list[bool]) -> None:
            self.golds = golds

        def each(self, stage: str, runs: dict[str, Any], of: int) -> dict[str, GradeResult]:
            return {k: run() for k, run in runs.items()}

        def run(self, tree: dict[str, str], **_: Any) -> GradeResult:
            return result(False)

        def note(self, *_: Any) -> None:
            pass

        def gold(self) -> GradeResult:
            return result(self.golds.pop(0))

    src = ExamSource(Path("."), "x", {}, None, {}, {"calc.py": "X = 1\n"}, "", {"tests/test_a.py": "import calc\n"},
                     {}, {"calc.py": "X = 2\n"})
    flaky = stages._attack(src, Grader([False, True]), {})  # type: ignore[arg-type]
    assert flaky["ok"] and flaky["goldStillPassesAfterSuite"] and flaky["goldAfterSuiteRuns"] == 2
    broken = stages._attack(src, Grader([False] * stages.AFTER_SUITE_RUNS), {})  # type: ignore[arg-type]
    assert not broken["ok"] and broken["goldStillPassesAfterSuite"] is False
    assert broken["goldAfterSuiteRuns"] == stages.AFTER_SUITE_RUNS


def test_the_next_exams_image_is_made_while_this_one_is_graded() -> None:
    """Issue 43: a harvest of 88 candidates made every image first, one after another, and graded nothing for
    the ten minutes that took. Now each worker has its own exam's image made (one build at a time) and grades
    it, so the next exam's image is made while this one is graded."""
    import threading
    from typing import Any

    from acx_oci.services.exams.certify import _certify_here

    made: dict[str, threading.Event] = {n: threading.Event() for n in "abc"}
    order: list[str] = []
    sources: list[Any] = [type("Src", (), {"exam_id": n})() for n in "abc"]

    def prepared(src: Any) -> tuple[Any, str]:
        order.append(f"image {src.exam_id}")
        made[src.exam_id].set()
        return src, "fh"

    def one(item: tuple[Any, str], _note: Any, _lanes: int) -> dict[str, Any]:
        if item[0].exam_id == "a":  # graded only once b's image is made beside it (old code: never)
            assert made["b"].wait(10), "b's image was not made while a was graded"
        order.append(f"graded {item[0].exam_id}")
        return {"exam": item[0].exam_id}

    kept: list[str] = []
    _certify_here(sources, prepared, 2, one, lambda src, rec, fh, t0, cached: kept.append(rec["exam"]), None)
    assert sorted(kept) == ["a", "b", "c"]
    assert order.index("image b") < order.index("graded a")
