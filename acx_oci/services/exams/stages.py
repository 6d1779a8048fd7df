"""The stages for one exam, in order; every grade runs in the contained sandbox (:func:`sandbox.grade`).

Names are the seed's (``seed`` is the contract check); ``eval`` plays the reference and the controls through
the ROM solver (:mod:`acx_oci.services.exams.evaluation`). ``isolated`` is the grading sandbox's containment
proof, taken in the very spec the grades ran in; a stage is ``promotionEligible`` when it is ok and isolated.
"""

from __future__ import annotations

import functools
import itertools
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import HarnessFault
from acx_oci.model import CertificationRecord, skipped
from acx_oci.model import exam as mx
from acx_oci.sandbox import GRADER_CONFIG, GradeResult, SandboxSpec, check, grade, write_files
from acx_oci.services.exams import derivation
from acx_oci.services.exams.controls import NOT_DISTINGUISHED, derive, distinction
from acx_oci.services.exams.diagnosis import short_ids as _short
from acx_oci.services.exams.diagnosis import why_reference_fails
from acx_oci.services.exams.environments import environment_facts
from acx_oci.services.exams.evaluation import evaluate
from acx_oci.services.exams.exposure import as_imported, grader_leaks, grader_visible, reference_new
from acx_oci.services.exams.harness import LANE, graded_all, retried
from acx_oci.services.exams.inprocess_probes import attack_inprocess
from acx_oci.services.exams.probes import HOOK_CONFTEST, REWARD_FILES, attack_suite
from acx_oci.services.exams.source import ExamSource, exam_freeze_hash

GRADE_SECONDS = 60.0
#: The share of mutants the hidden tests must kill when the controls are derived: fewer, and the tests are
#: too weak to tell a fix from a near miss (an equivalent mutant survives any test, so not 100%).
MIN_KILLED = 0.5
#: ``freeze.environment`` of an exam with an environment spec graded by the host's Python (--no-environments).
HOST_GRADED = {"python": "host", "packages": "host",
               "note": "graded by the host's Python (--no-environments): env.json's image was not used"}
LOOKALIKE_MISSING = ("no lookalike control (controls/lookalike/): a near miss a competent engineer would write is "
                     "a human's job; give one (exam import --lookalike PATCH)")
NO_INCOMPLETE = ("no incomplete probe: the hidden tests pass the fix without its last hunk and every mutant of "
                 "it; give one (exam import --incomplete PATCH)")
#: Registers the exam's markers (marker -> file) in the host-only registry; returns collisions.
Register = Callable[[str, dict[str, str]], list[str]]
#: Hears each stage of one exam as it starts: (stage, step, of), e.g. ("gold", 2, 3); cheap, data only.
Note = Callable[[str, int, int], None]


def quiet_note(stage: str, step: int, of: int) -> None:
    """The default :data:`Note`: nobody is watching."""


class _Grader:
    """Grades overlays of the workspace with the exam's hidden tests; caches identical submissions."""

    def __init__(self, src: ExamSource, work: Path, rootfs: Path | None = None, note: Note = quiet_note,
                 lanes: int = 1) -> None:
        self.src, self.work, self.note, self.lanes = src, work, note, lanes
        self._n = itertools.count(1)  # each grade's own submission folder, from any lane
        self.tests = work / "tests"
        self.tests.mkdir()
        write_files(self.tests, src.grader_files())
        # With an environment image (promotion) every grade of the chain runs with the image as /.
        self.spec = SandboxSpec(rootfs=rootfs, time_seconds=GRADE_SECONDS, memory_mib=2048, pids=256)
        self.host_before = self.host_digest()

    def host_digest(self) -> str:
        return sha256_digest(canonical({"exam": self.src.grader_files(),
                                        "staged": {p.relative_to(self.tests).as_posix(): p.read_text("utf-8")
                                                   for p in sorted(self.tests.rglob("*")) if p.is_file()}}))

    def run(self, files: dict[str, str], *, expect_pass: bool = False, what: str = "a probe",
            upstream: bool = False, probe: bool = False, whole: bool = False) -> GradeResult:
        """One grade; an attack ``probe`` needs only its verdict (no honeypot run once it is found forged)."""
        sub = self.work / f"sub-{next(self._n)}"
        sub.mkdir()
        write_files(sub, files)
        try:
            return retried(lambda seconds: grade(sub, self.tests, spec=replace(self.spec, time_seconds=seconds),
                                                 time_seconds=seconds, every_layer=not probe),
                           expect_pass=expect_pass, what=f"grading {what}", upstream=upstream,
                           deadline=GRADE_SECONDS, whole=whole)
        finally:
            shutil.rmtree(sub, ignore_errors=True)

    def each(self, stage: str, runs: dict[str, Callable[[], GradeResult]], of: int) -> dict[str, GradeResult]:
        """Every one of ``runs`` graded (independent sandboxes: :attr:`lanes` at a time), each noted as it
        starts as ``stage`` n/``of`` (the stage's steps, these and those after them)."""
        return graded_all(runs, self.lanes, lambda k: self.note(stage, k, of))

    def select(self, ids: list[str]) -> ExamSource:
        """From now on grade exactly ``ids`` (the exam's source carries them, for the eval stage's plays)."""
        self.src = replace(self.src, hidden=derivation.with_ids(self.src.hidden, ids))
        (self.tests / GRADER_CONFIG).unlink(missing_ok=True)
        write_files(self.tests, {GRADER_CONFIG: self.src.hidden[GRADER_CONFIG]})
        self.host_before = self.host_digest()
        return self.src

    def overlay(self, over: dict[str, str], what: str = "a control", upstream: bool = True,
                whole: bool = False) -> GradeResult:
        """The workspace with ``over`` on it; ``upstream``: a tree of upstream's own code (the base, a control,
        a mutant), whose run that cannot grade is the harness's lane error, never the tree's fail; ``whole``:
        every outcome is needed, so a run past its deadline is retried, never read as failing tests."""
        return self.run({**self.src.workspace, **over}, what=what, upstream=upstream, whole=whole)

    def gold(self) -> GradeResult:
        """The reference: a run that should pass (unless the exam is impossible), so a timeout is retried."""
        return self.run({**self.src.workspace, **self.src.reference}, expect_pass=not self.src.impossible,
                        what="the reference", upstream=True)


def _verdict(r: GradeResult) -> str:
    return "P" if r.passed else "F"


def certify_exam(src: ExamSource, patterns: tuple[tuple[str, str, str], ...], register: Register,
                 image: tuple[Path, str] | None = None, secrets: tuple[Path, ...] = (),
                 gold_runs: int = 1, note: Note = quiet_note, lanes: int = 1) -> CertificationRecord:
    """Run the stages in order and return the sealed record.

    ``image`` (unpacked root, manifest digest) is promotion: the whole chain, the evaluation included, runs
    inside that image, with no network, and the record names it (``freeze.imageDigest``, ``promotion``).
    Without one the record says ``imageDigest: null`` and ``promotion.ok: false`` — never a digest borrowed
    from elsewhere. ``secrets`` (the certifier's state) must be unreachable from every sandbox. ``gold_runs``
    is how many runs the reference must pass when the controls are derived (:func:`gold_runs_for`). ``note``
    hears each stage (and each grade's place in it: gold 2/3, mutants 3/8) as it starts. ``lanes``: how many of
    the exam's independent grades (probes, mutants, controls) run at once.
    """
    note("contract", 1, 1)
    stages: dict[str, dict[str, Any]] = {"seed": _contract(src)}
    if not stages["seed"]["ok"]:
        for s in mx.STAGES[1:]:
            stages[s] = skipped(s, "seed (contract) failed")
        stages["promotion"] = dict(mx.NO_IMAGE)
        return CertificationRecord.seal(src.exam_id, src.version, stages, impossible=src.impossible)
    frozen = exam_freeze_hash(src, patterns)  # of the exam as it is on disk, before controls are chosen for it
    work = Path(tempfile.mkdtemp(prefix="acx-exam-"))
    try:
        g = _Grader(src, work, image[0] if image else None, note, lanes)
        isolated = bool(check(secrets, g.spec).get("proven"))
        wins = reference_new(src)
        src, graded_ids, first = derivation.selected(src, lambda over, what: g.overlay(over, what, whole=True), g.gold,
                                                          g.select, g.note)
        stages["gold"], base = _gold(src, g, wins, gold_runs_for(src, gold_runs), graded_ids, first)
        nothing = derivation.nothing_to_grade(stages["gold"], impossible=src.impossible)
        if nothing:  # the exam is refused at gold whatever the rest says: grading it further is time lost
            for s in ("grader", "attack", "eval"):
                stages[s] = skipped(s, nothing)
        else:
            src, derived = _derive_controls(src, g)
            stages["grader"] = _controls(src, g, base, derived)
            stages["attack"] = _attack(src, g, base)
            stages["grader"]["hostGraderUnchanged"] = g.host_digest() == g.host_before
            stages["grader"]["ok"] = stages["grader"]["ok"] and stages["grader"]["hostGraderUnchanged"]
            stages["eval"] = evaluate(src, image[0] if image else None, secrets, note)
    except HarnessFault as exc:  # the harness failed, not the exam: said as such, and never cached
        return _harness_record(src, stages, str(exc))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for s in ("gold", "grader", "attack"):
        stages[s]["promotionEligible"] = bool(stages[s]["ok"] and isolated)
    stages["gold"]["isolated"] = stages["grader"]["isolated"] = isolated
    stages["grader"]["controlsDistinguished"] = bool(stages["grader"].get("distinguished", False))
    stages["attack"]["passedForPromotion"] = bool(stages["attack"]["ok"] and isolated and image is not None)
    stages["eval"]["promotionEligible"] = bool(stages["eval"]["ok"] and isolated)
    note("canary", 1, 1)
    stages["canary"] = _canary(src, register)
    note("publication", 1, 1)
    stages["publication"] = _publication(src, patterns, wins)
    note("freeze", 1, 1)
    stages["freeze"] = {"ok": True, "treeHash": src.tree_hash(), "freezeHash": frozen,
                        "parentCommit": src.parent_commit, "imageDigest": image[1] if image else None}
    env = environment_facts(image[0] if image else None)
    if env is not None:  # the Python and packages the exam was graded with (its env.json's venv)
        stages["freeze"]["environment"] = env
    elif image is None and src.environment is not None:  # --no-environments: said, never left to be guessed
        stages["freeze"]["environment"] = dict(HOST_GRADED)
    if image is None:
        stages["promotion"] = dict(mx.NO_IMAGE)
    else:
        chain_ok = all(stages[s].get("ok") for s in mx.STAGES if s != "promotion")
        stages["promotion"] = {"ok": bool(chain_ok), "imageDigest": image[1],
                               "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    return CertificationRecord.seal(src.exam_id, src.version, stages, impossible=src.impossible)


def environment_record(src: ExamSource, why: str) -> CertificationRecord:
    """The record of an exam whose environment image could not be built or pulled: refused at gold (nothing
    could be graded), the reason named; :func:`certify_suite` does not cache it."""
    stages: dict[str, dict[str, Any]] = {"seed": _contract(src)}
    for s in mx.STAGES[1:-1]:
        stages[s] = skipped(s, "gold (the exam's environment) failed")
    stages["gold"].pop("skipped")  # gold did not pass: it is the stage that refuses, and says why
    stages["gold"].update(environmentBuilt=False, reason=f"environment not built: {why}")
    stages["promotion"] = dict(mx.NO_IMAGE)
    return CertificationRecord.seal(src.exam_id, src.version, stages, impossible=src.impossible)


def _harness_record(src: ExamSource, stages: dict[str, dict[str, Any]], why: str) -> CertificationRecord:
    """The record of a run the harness could not finish: the stages that did not run say so, the first of
    them carries ``laneError: harness`` (no verdict on the exam; :func:`certify_suite` never caches it)."""
    first = next(s for s in mx.STAGES[1:] if s not in stages)
    for s in mx.STAGES[1:-1]:
        if s not in stages:
            stages[s] = skipped(s, f"harness lane error: {why}")
    stages[first].update(laneError=LANE, reason=f"harness lane error: {why}")
    for s, flags in mx.FLAGS.items():  # a stage that ran before the fault still carries the record's flags
        for k, v in flags.items():
            stages[s].setdefault(k, list(v) if isinstance(v, list) else v)
    stages["grader"]["controlsDistinguished"] = bool(stages["grader"].get("distinguished", False))
    stages["promotion"] = dict(mx.NO_IMAGE)
    return CertificationRecord.seal(src.exam_id, src.version, stages, impossible=src.impossible)


def _contract(src: ExamSource) -> dict[str, Any]:
    if src.contract_error is not None:
        return {"ok": False, "schemaValid": False, "problems": [src.contract_error]}
    if src.families is None:
        facts = mx.contract_facts(src.contract, {"families": {}})
        facts.update(ok=False, familyRegistryFound=False)
        return facts
    facts = mx.contract_facts(src.contract, src.families)
    facts["graderEntryExists"] = (src.dir / src.grader_entry).is_file()
    facts["hasReference"] = bool(src.reference)
    # The lookalike is a human's near miss: its absence is the grader stage's refusal, said there.
    facts["hasControls"] = ("incomplete" in src.controls or bool(src.mutants)) and (
        not src.impossible or "second-reference" in src.controls)
    facts["ok"] = bool(facts["ok"] and facts["graderEntryExists"] and facts["hasReference"] and facts["hasControls"])
    return facts


def gold_runs_for(src: ExamSource, wanted: int) -> int:
    """Runs the reference must pass: ``wanted`` for an exam whose controls are derived (mutants, no human's
    lookalike: nothing hand-checked says its tests are deterministic), 1 for a hand-made or impossible one."""
    derived = bool(src.mutants) and "lookalike" not in src.controls and not src.impossible
    return max(1, wanted) if derived else 1


def _stability(g: _Grader, first: GradeResult, runs: int) -> dict[str, Any]:
    """Gold stability: the reference graded ``runs`` times in all (stopping at its first failure); a gold that
    passes some runs and fails another is a flaky exam, refused as such (harness faults are retried apart)."""
    passes = int(first.passed)
    done = 1
    while done < runs and passes == done:
        g.note("gold", done + 1, runs)
        passes += int(g.gold().passed)
        done += 1
    facts: dict[str, Any] = {"goldRuns": runs, "goldPasses": passes}
    if runs > 1:
        facts["referenceStable"] = passes == runs
        if 0 < passes < done:
            facts["reason"] = f"flaky: the reference passed {passes} of {done} runs"
    return facts


def _gold(src: ExamSource, g: _Grader, wins: dict[bytes, int], runs: int = 1, derived: dict[str, Any] | None = None,
          first: tuple[GradeResult, GradeResult] | None = None) -> tuple[dict[str, Any], dict[str, GradeResult]]:
    g.note("gold", 1, runs)
    untouched, gold = first or (g.overlay({}, "the untouched tree"), g.gold())
    visible = grader_visible(src)
    leaked = mx.leaks(wins, src.model_facing())
    facts: dict[str, Any] = {"untouchedFails": not untouched.passed, "graderHidden": not visible,
                             "referenceNotLeaked": not leaked}
    base = {"untouched": untouched, "gold": gold}
    if src.impossible:
        second = g.overlay(src.controls.get("second-reference", {}))
        f1, f2 = gold.failing(), second.failing()
        facts.update(impossible=True, referenceFails=not gold.passed and gold.report_ok,
                     secondReferenceFails=not second.passed and second.report_ok,
                     referencesFailDifferentTests=bool(f1) and bool(f2) and not (f1 & f2),
                     referenceFailing=_short(f1), secondReferenceFailing=_short(f2))
        ok = facts["referenceFails"] and facts["secondReferenceFails"] and facts["referencesFailDifferentTests"]
    else:
        facts["referencePasses"] = gold.passed
        facts["grading"] = gold.how()  # in-process (the tests import the package) and the tamper checks run
        facts.update(_stability(g, gold, runs))
        ok = gold.passed and facts.get("referenceStable", True)
        if not gold.passed:
            facts.update(why_reference_fails(gold, src.workspace))
        if gold.package_before_runner:  # pytest itself imports the package under test: named, for the record
            facts["packageBeforeRunner"] = True
        if derived is not None:
            facts["tests"] = derived
            if not derived["failToPass"]:
                ok = False
                facts["nothingToSolve"] = True
                facts["reason"] = "; ".join(filter(None, (derivation.nothing_to_solve(derived), facts.get("reason"))))
        f2p = derivation.fail_to_pass(src.source)
        if f2p:  # SWE-bench's rule: the base fails every FAIL_TO_PASS test (one it cannot even import fails)
            facts["failToPassPassingOnBase"] = sorted(t for t in f2p if untouched.outcome(t) == "passed")
            facts["untouchedFails"] = facts["untouchedFails"] and not facts["failToPassPassingOnBase"]
    if visible:
        facts["graderVisibleAt"] = visible
    if leaked:
        facts["leaks"] = leaked
    facts["ok"] = bool(ok and facts["untouchedFails"] and facts["graderHidden"] and facts["referenceNotLeaked"])
    return {"ok": facts.pop("ok"), **facts}, base


def _derive_controls(src: ExamSource, g: _Grader) -> tuple[ExamSource, dict[str, Any]]:
    """The derived probes chosen among the fix's mutants (and the fix without its last hunk): :mod:`controls`."""
    return derive(src, lambda tree, name: g.overlay(tree, name), g.note, g.lanes)


def _controls(src: ExamSource, g: _Grader, base: dict[str, GradeResult],
              derived: dict[str, Any] | None = None) -> dict[str, Any]:
    res = dict(base)
    runs: dict[str, Callable[[], GradeResult]] = {
        "incomplete": lambda: g.overlay(src.controls.get("incomplete", {})),
        "lookalike": lambda: g.overlay(src.controls.get("lookalike", {})),
        "plantedHook": lambda: g.overlay({"conftest.py": HOOK_CONFTEST}, "a planted hook", upstream=False),
        "plantedReward": lambda: g.overlay(dict(REWARD_FILES), "planted reward files", upstream=False)}
    res.update(g.each("controls", runs, len(runs) + 1))
    g.note("controls", len(runs) + 1, len(runs) + 1)
    res["goldAfterTamperAttempts"] = g.gold()  # after the tamper attempts have all run
    controls = {k: _verdict(res[k]) for k in mx.CONTROLS}
    want = mx.EXPECTED_IMPOSSIBLE if src.impossible else mx.EXPECTED
    inc, look = res["incomplete"], res["lookalike"]
    by = distinction(inc, look)
    distinguished = by is not None
    facts: dict[str, Any] = {
        "controls": controls, "distinguished": distinguished, "distinguishedBy": by,
        "failing": {"incomplete": _short(inc.failing()), "lookalike": _short(look.failing())},
        "plantedHookLabel": "plantedHook:conftest.py",
        "plantedRewardIgnored": controls["plantedReward"] == "F",
        "plantedHooksIgnored": controls["plantedHook"] == "F",
        "controlsAsExpected": controls == want,
    }
    if src.impossible:
        facts["goldAfterTamperUnchanged"] = res["goldAfterTamperAttempts"].failing() == res["gold"].failing()
    strong = True
    if derived:
        facts.update(controlsDerived=True, **derived)
        if not distinguished:  # certified still, under a relaxation its record and credentials name
            facts["relaxations"] = [NOT_DISTINGUISHED]
    if derived and "mutantsMade" in derived:  # the mutation score stands in for a human's distinguishing pair
        strong = derived["mutantsKilled"] >= MIN_KILLED * derived["mutantsMade"]
        facts["testsKillMutants"] = strong
        if not strong:
            facts["reason"] = (f"weak tests: they kill {derived['mutantsKilled']} of {derived['mutantsMade']} "
                               f"mutants of the fix (at least {MIN_KILLED:.0%} needed)")
    elif "lookalike" not in src.controls:
        facts["lookalikeProvided"] = False
        facts["reason"] = LOOKALIKE_MISSING
    if "incomplete" not in src.controls and derived:
        facts["reason"] = facts.get("reason") or NO_INCOMPLETE
    ok = (facts["controlsAsExpected"] and (distinguished or bool(derived)) and strong
          and "incomplete" in src.controls
          and facts["plantedRewardIgnored"] and facts["plantedHooksIgnored"] and "lookalike" in src.controls)
    return {"ok": bool(ok and facts.get("goldAfterTamperUnchanged", True)), **facts}


#: Runs of the reference after the attack suite, at most, until one passes: a grade runs in a sandbox and a copy
#: of its own, so what the suite left behind fails every run, and a reference flaky under load passes the next.
AFTER_SUITE_RUNS = 3


def _attack(src: ExamSource, g: _Grader, base: dict[str, GradeResult]) -> dict[str, Any]:
    suite = attack_suite(src.workspace)
    graded = g.each("attack", {name: functools.partial(g.run, tree, probe=True) for name, tree in suite.items()},
                    len(suite) + 1)
    verdicts = {name: _verdict(r) for name, r in graded.items()}
    exploits = [name for name, r in graded.items() if r.passed]
    inproc = attack_inprocess(src.workspace, src.grader_files(), lambda name, tree: g.run(tree, what=name, probe=True),
                              lanes=g.lanes)
    exploits += inproc.get("inProcessExploits", [])
    g.note("attack", len(suite) + 1, len(suite) + 1)
    after, runs = g.gold(), 1
    while not src.impossible and not after.passed and runs < AFTER_SUITE_RUNS:  # tenacity 4213bad956's timed
        after, runs = g.gold(), runs + 1  # retries failed once under load: the suite left nothing behind
    facts: dict[str, Any] = {"probes": verdicts, "trivialExploits": exploits, **inproc, "goldAfterSuiteRuns": runs}
    if src.impossible:
        facts["goldStillPassesAfterSuite"] = None
        facts["goldUnchangedAfterSuite"] = (not after.passed) and after.failing() == base["gold"].failing()
        ok = facts["goldUnchangedAfterSuite"]
    else:
        facts["goldStillPassesAfterSuite"] = after.passed
        ok = after.passed
    return {"ok": bool(ok and not exploits), **facts}


def _canary(src: ExamSource, register: Register) -> dict[str, Any]:
    markers: dict[str, list[str]] = {}
    for path, text in src.hidden.items():
        if path.rsplit("/", 1)[-1].startswith("test_") and path.endswith(".py"):
            markers[f"hidden/{path}"] = mx.find_canaries(text)
    one_each = bool(markers) and all(len(m) == 1 for m in markers.values())
    flat = [m[0] for m in markers.values() if m]
    unique_here = len(set(flat)) == len(flat)
    collisions = register(src.exam_id, {f: m[0] for f, m in markers.items() if len(m) == 1}) if one_each else []
    facts = {"markers": {f: (m[0] if len(m) == 1 else m) for f, m in markers.items()},
             "oneMarkerPerHiddenFile": one_each, "unique": unique_here and not collisions,
             "registered": one_each and not collisions}
    if collisions:
        facts["collisions"] = collisions
    return {"ok": bool(one_each and facts["unique"] and facts["registered"]), **facts}


def _publication(src: ExamSource, patterns: tuple[tuple[str, str, str], ...],
                 wins: dict[bytes, int]) -> dict[str, Any]:
    model = src.model_facing()
    # a grader file the workspace holds as it is (test data beside the tests) is scanned there, as upstream's
    grader = {f"grader/{k}": v for k, v in src.grader_files().items() if src.workspace.get(k) != v}
    findings = mx.scan_patterns(model, patterns, model_facing=True)
    upstream: list[dict[str, Any]] = []
    if as_imported(src):  # upstream's public tree as it was (pyparsing's example `PASSWORD = "swordfish"`):
        # named, not refused; a canary marker in it is still a leak of a hidden test
        upstream = [f for f in findings if f["file"].startswith("workspace/") and f["rule"] != "canary-marker"]
        findings = [f for f in findings if f not in upstream]
    findings += mx.scan_patterns(grader, patterns, model_facing=False)
    findings += mx.leaks(wins, model)
    # The grader is upstream's tests: one that says what the fix's docstring example says (the same input,
    # the same expected value), or names the API the fix adds, publishes no solution. The fix's new code in a
    # grader file still does.
    findings += grader_leaks(src, grader)
    facts = {"ok": not findings, "findings": findings, "scanned": {"modelFacing": len(model), "grader": len(grader)},
             "patterns": len(patterns)}
    if upstream:
        facts["upstreamFindings"] = upstream
    return facts


def harness_record(src: ExamSource, why: str) -> CertificationRecord:
    """The record of an exam the harness lost before any stage after the contract ran (a Dask worker lost,
    its answer refused): a harness lane error, never cached, never the exam's failure."""
    return _harness_record(src, {"seed": _contract(src)}, why)


def with_host_canary(src: ExamSource, rec: CertificationRecord, register: Register) -> CertificationRecord:
    """A record certified elsewhere (a Dask worker) resealed with its canary stage taken here, against the
    host-only registry the worker never sees (a stage that did not run stays as it was)."""
    stages = {s: dict(v) for s, v in rec["stages"].items()}
    if not stages["canary"].get("skipped"):
        stages["canary"] = _canary(src, register)
    return CertificationRecord.seal(src.exam_id, src.version, stages, impossible=src.impossible)
