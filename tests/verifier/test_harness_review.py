"""The harness review as a rule table: the examiner's faults withheld before rating, and replayed in step.

Real crypto, the real engine and replay; the solver slot is filled by small solvers that play the examiner's
faults (a grader that says the same thing for every task, a provider that fails), and bubblewrap measures CPU.
"""

from __future__ import annotations

import copy
import hashlib
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import generate_identity
from acx_oci.evaluation import replay_credential
from acx_oci.jsonio import first_error
from acx_oci.model import LevelCredential, gamerecords, statuslist
from acx_oci.model import benchmark as bmodel
from acx_oci.model import rating as ts
from acx_oci.model.credential import LevelClaim, build_level_credential, evidence_item, sign_credential
from acx_oci.rating import SolverResult, engine
from acx_oci.rating import harness_review as hr
from acx_oci.sandbox import SandboxSpec, grade, run, staging_dir
from acx_oci.solvers import ReferenceSolver

SEAL_KEY = bytes(range(32))
ROM = "sha256:" + hashlib.sha256(b"harness review ROM").hexdigest()
BROKEN = "E   RuntimeError: grader fixture 'db' is unavailable"
NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture(scope="module")
def demo() -> tuple[bmodel.Benchmark, list[dict[str, Any]]]:
    bench = bmodel.from_document(bmodel.demo_document())
    _, held = bmodel.split(bench, SEAL_KEY)
    return bench, held


class Examiner:
    """The reference player, with the examiner's faults on chosen tasks."""

    def __init__(self, broken: set[str] = frozenset(), providers: tuple[str, ...] = (),  # type: ignore[assignment]
                 upstream: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.ref, self.broken, self.providers, self.upstream = ReferenceSolver(33), broken, providers, upstream

    def descriptor(self) -> dict[str, Any]:
        return self.ref.descriptor()

    def record_fields(self) -> dict[str, Any]:
        return self.ref.record_fields()

    def solve(self, task: dict[str, Any], rom_digest: str) -> SolverResult:
        tid = str(task["id"])
        facts: dict[str, Any] = {}
        if self.providers:
            facts["record"] = {"model": {"id": self.providers[int(hashlib.sha256(tid.encode()).hexdigest(), 16)
                                                             % len(self.providers)], "api": "openai-chat"}}
        if tid in self.upstream:
            return SolverResult("lane-error", "upstream_failed", facts={**facts, "review": {"lane": "upstream",
                                                                                            "failureText": BROKEN}})
        if tid in self.broken:
            return SolverResult("model-fail", "hidden tests failed (1 of 1)",
                                facts={**facts, "review": {"failureText": BROKEN}})
        res = self.ref.solve(task, rom_digest)
        text = f"E   AssertionError: {tid} expected 4" if res.outcome == "model-fail" else None
        return SolverResult(res.outcome, res.detail, facts={**facts, **({"review": {"failureText": text}}
                                                                        if text else {})})


def _run(demo: tuple[bmodel.Benchmark, list[dict[str, Any]]], solver: Any, games: int = 90) -> engine.Result:
    bench, held = demo
    return engine.run(rom_digest=ROM, benchmark_digest=bench.digest, held_out=held,
                      commitment_key=bmodel.commitment_key(SEAL_KEY), solver=solver,
                      params=engine.Params(games=games))


def _drawn(demo: tuple[bmodel.Benchmark, list[dict[str, Any]]], k: int, start: int = 0) -> set[str]:
    return {str(t["id"]) for t in engine.draw_order(ROM, demo[1])[start:start + k]}


def _rerate(preds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Predicates with their ratings recomputed: arithmetically honest whatever their outcomes say."""
    r = ts.DEFAULT_MODEL.initial()
    out = []
    for p in preds:
        before = r
        if gamerecords.is_rated(p):
            r = ts.rate(r, float(p["difficulty"]), p["outcome"] == "certified-pass")
        out.append({**p, "ratingBefore": before.to_json(), "ratingAfter": r.to_json()})
    return out


def _credential(preds: list[dict[str, Any]], signer: Any, review: hr.Review | None = None
                ) -> tuple[dict[str, Any], list[bytes]]:
    """A level credential over these records, its numbers what they replay to."""
    recs = [gamerecords.sign_game(p, signer) for p in preds]
    rating = gamerecords.rerate(preds)
    rated = [p for p in preds if gamerecords.is_rated(p)]
    level = ts.acx_level(ts.conservative(rating))
    claim = LevelClaim(previous_version="none",
        issuer_did=signer.did, subject_id="urn:acx:cartridge:io.example/agent@1.0.0", capability_id="build-dag",
        rating_mu=rating.mu, rating_sigma=rating.sigma, games_played=len(rated), acx_level=level,
        career_tier=ts.career_tier(level),
        pass_rate=sum(p["outcome"] == "certified-pass" for p in rated) / len(rated), rom_digest=ROM,
        manifest_digest="sha256:" + "a" * 64, benchmark_id="demo", benchmark_version="1",
        benchmark_digest=preds[0]["benchmarkDigest"], held_out_slice_digest="sha256:" + "c" * 64,
        evidence=[evidence_item(r.raw, game=i + 1, inline=r.envelope) for i, r in enumerate(recs)],
        status_entry=statuslist.status_entry("https://status.example/l", 1), valid_from=NOW,
        valid_until=NOW + timedelta(days=1),
        achievement_name="ACX Level", extra={"acx:harnessReview": review.to_json()} if review else None)
    return build_level_credential(claim), [r.raw for r in recs]


def _preds(result: engine.Result) -> list[dict[str, Any]]:
    return [copy.deepcopy(g.predicate) for g in result.games]


def test_the_rule_table_names_classifies_and_says_what_each_rule_reads_and_withholds() -> None:
    rows = {r["rule"]: r for r in hr.table()}
    assert set(rows) == {"containment-unproven", "identical-failure-text", "starvation",
                         "identical-failure-across-providers", "provider-failure-share", "unrated-share"}
    assert rows["containment-unproven"]["withholds"] == "the whole run"
    assert rows["identical-failure-across-providers"]["classification"] == hr.DIAGNOSTIC
    assert all(r["classification"] in (hr.DIAGNOSTIC, hr.VERDICT_BEARING) and r["reads"] for r in rows.values())
    with pytest.raises(ValueError, match="diagnostic"):
        hr.Finding("x", hr.DIAGNOSTIC, "may not", (1,), (1,))


def test_one_grader_text_over_eight_unrelated_tasks_withholds_those_games_and_replays(
        demo: tuple[bmodel.Benchmark, list[dict[str, Any]]]) -> None:
    broken = _drawn(demo, 8, start=10)
    honest, faulty = _run(demo, Examiner()), _run(demo, Examiner(broken))
    assert honest.review.findings == () and honest.issued
    hit = [g for g in faulty.games if g.task_id in broken]
    assert len(hit) == 8 and all(g.outcome == "withheld" for g in hit)
    for g in hit:
        assert g.predicate["review"]["played"] == "model-fail"
        assert g.predicate["review"]["withheldBy"] == "identical-failure-text"
        assert g.predicate["ratingBefore"] == g.predicate["ratingAfter"]
        assert BROKEN not in str(g.predicate)  # the grader's text travels only as a keyed digest
    assert faulty.rated == 82 and faulty.issued, faulty.reasons
    assert [g.outcome for g in faulty.games if g.task_id not in broken] == \
        [g.outcome for g in honest.games if g.task_id not in broken]  # every other game rated as before
    (finding,) = faulty.review.findings
    assert finding.rule == "identical-failure-text" and sorted(finding.withheld) == sorted(g.number for g in hit)
    assert gamerecords.rerate([g.predicate for g in faulty.games]) == faulty.rating

    signer = generate_identity()
    cred, raws = _credential(_preds(faulty), signer, faulty.review)
    review = cred["credentialSubject"]["result"][0]["acx:harnessReview"]
    assert review["findings"][0]["rule"] == "identical-failure-text" and len(review["withheld"]) == 8
    check = replay_credential(LevelCredential.document(cred), raws, [signer.public_bytes])
    assert check.ok, check.message
    assert cred["credentialSubject"]["result"][0]["acx:gamesPlayed"] == 82
    signed = sign_credential(cred, signer, signer.verification_method, str(cred["validFrom"]))
    assert first_error(signed, "level-credential.schema.json") is None
    bad = copy.deepcopy(signed)
    bad["credentialSubject"]["result"][0]["acx:harnessReview"]["findings"][0]["classification"] = "advisory"
    assert first_error(bad, "level-credential.schema.json") is not None


def test_replay_refuses_a_withheld_set_the_rules_do_not_give(
        demo: tuple[bmodel.Benchmark, list[dict[str, Any]]]) -> None:
    signer = generate_identity()
    honest = _run(demo, Examiner(), games=40)
    preds = _preds(honest)
    # The verifier drops a game it lost, calling it the examiner's fault: the rules do not withhold it.
    p = next(q for q in preds if q["outcome"] == "model-fail")
    p["outcome"], p["review"] = "withheld", {**p.get("review", {}), "played": "model-fail", "withheldBy": "starvation"}
    cred, raws = _credential(_rerate(preds), signer)
    check = replay_credential(LevelCredential.document(cred), raws, [signer.public_bytes])
    assert not check.ok and check.code == "evidence_mismatch"
    assert "games withheld by the harness review" in check.message

    # ... or keeps the games the rules withhold: eight unrelated tasks, one grader text, records left model-fail.
    kept = _preds(_run(demo, Examiner(_drawn(demo, 8))))
    for q in kept:
        if q.get("review", {}).pop("withheldBy", None):
            q["outcome"] = q["review"].pop("played")
    cred, raws = _credential(_rerate(kept), signer)
    check = replay_credential(LevelCredential.document(cred), raws, [signer.public_bytes])
    assert not check.ok and "games withheld by the harness review" in check.message


def test_a_diagnostic_finding_never_changes_the_verdict(
        demo: tuple[bmodel.Benchmark, list[dict[str, Any]]]) -> None:
    upstream = _drawn(demo, 3, start=20)  # 3 of 90 provider failures: under the 10% share
    plain = _run(demo, Examiner(providers=("prov-a", "prov-b"), upstream=set()))
    diag = _run(demo, Examiner(providers=("prov-a", "prov-b"), upstream=upstream))
    assert [f.rule for f in diag.review.findings] == ["identical-failure-across-providers"]
    assert diag.review.withheld == {} and diag.review.reasons == ()
    assert diag.issued and plain.issued and diag.reasons == plain.reasons == ()
    # the same run with the diagnostic rule's evidence stripped rates identically
    stripped = hr.review([hr.view({**g.predicate, "review": {}}) for g in diag.games], diag.draws)
    assert stripped.withheld == diag.review.withheld and stripped.reasons == diag.review.reasons
    many = _run(demo, Examiner(providers=("prov-a",), upstream=_drawn(demo, 12)))
    assert not many.issued and any(r.startswith("examiner_unreliable: the model provider failed")
                                   for r in many.reasons)


def test_withheld_games_count_toward_the_unrated_share(demo: tuple[bmodel.Benchmark, list[dict[str, Any]]]) -> None:
    r = _run(demo, Examiner(_drawn(demo, 10)), games=60)  # 10 of 60 withheld: more than a tenth
    assert len(r.review.withheld) == 10 and not r.issued
    assert r.reasons[0].startswith("examiner_unreliable")
    four = _run(demo, Examiner(_drawn(demo, 4)))  # fewer than 5 tasks share the text: the model's fails
    assert four.review.withheld == {} and four.outcome_counts()["withheld"] == 0


def test_starvation_needs_a_run_queue_wait_not_just_idle_cpu() -> None:
    def g(n: int, cpu: float, wait: float) -> hr.GameView:
        return hr.GameView(n, f"t{n}", "model-fail", timed_out=True, cpu_seconds=cpu, runqueue_seconds=wait,
                           limit_seconds=10.0)
    found = hr.review([g(1, 0.1, 6.0), g(2, 0.1, 0.0), g(3, 9.0, 1.0)] + [
        hr.GameView(n, f"t{n}", "certified-pass") for n in range(4, 40)], 39)
    assert found.withheld == {1: "starvation"}  # 2 slept (the agent's choice), 3 computed: both the model's


bwrap = pytest.mark.skipif(shutil.which("bwrap") is None and os.environ.get("CI") != "true",
                           reason="bubblewrap (bwrap) is not installed")


@bwrap
def test_the_sandbox_measures_cpu_and_run_queue_time_when_it_kills() -> None:
    idle = run(SandboxSpec(time_seconds=1.5), ["/bin/sh", "-c", "sleep 30"])
    busy = run(SandboxSpec(time_seconds=1.5), ["/bin/sh", "-c", "while :; do :; done"])
    assert idle.timed_out and busy.timed_out
    assert idle.cpu_seconds is not None and idle.cpu_seconds < 0.3
    assert idle.runqueue_seconds is not None and idle.runqueue_seconds < 0.5
    assert busy.cpu_seconds is not None and busy.cpu_seconds > 0.3
    done = run(SandboxSpec(time_seconds=5), ["/bin/true"])
    assert not done.timed_out and done.cpu_seconds is None


@bwrap
def test_a_broken_grader_fixture_prints_one_text_for_unrelated_tasks(tmp_path: Path) -> None:
    texts = []
    for name, expect in (("alpha", "add(2, 2) == 4"), ("beta", "mul(3, 3) == 9")):
        stage = staging_dir("acx-test-")
        try:
            sub, tests = stage / "sub", stage / "tests"
            sub.mkdir()
            tests.mkdir()
            (sub / "solution.py").write_text("def add(a, b):\n    return a + b\n", "utf-8")
            (tests / f"test_{name}.py").write_text(
                "import pytest\n\n\n@pytest.fixture\ndef db():\n    raise RuntimeError(\"grader fixture 'db' is "
                f"unavailable\")\n\n\ndef test_{name}(db):\n    assert {expect}\n", "utf-8")
            graded = grade(sub, tests, time_seconds=30)
            assert not graded.passed
            texts.append(hr.failure_text(graded.stdout))
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    assert texts[0] is not None and texts[0] == texts[1] and "RuntimeError" in texts[0]
    assert hr.failure_text(b"no errors here\n") is None


@bwrap
def test_a_real_rom_run_records_what_the_rules_read(tmp_path: Path) -> None:
    """simple_agent on bench-py in bubblewrap: its failures carry distinct grader-text digests, none withheld."""
    import base64
    import json

    from ..support.cli import cli, ok

    root = Path(__file__).resolve().parent.parent.parent
    ok(cli("keygen", tmp_path / "publisher"))
    ok(cli("keygen", tmp_path / "verifier"))
    layout = f"oci:{tmp_path / 'layout'}"
    d = tmp_path / "agent"
    ok(cli("cartridge", "init", d, "--id", "io.example/simple", "--version", "1.0.0", "--capability",
           "implement-feature[python+pytest]@software-engineering", "--runtime", "python3 /rom/skills/agent.py"))
    shutil.copy(root / "testdata" / "agents" / "simple_agent.py", d / "skills" / "agent.py")
    ok(cli("cartridge", "push", d, f"{layout}:agent", "--key", tmp_path / "publisher.key"))
    ok(cli("benchmark", "push", root / "testdata" / "bench-py", f"{layout}:bench", "--seal-to",
           tmp_path / "verifier.did.json", "--allow-uncertified"))
    did = json.loads((tmp_path / "verifier.did.json").read_text())["id"]
    res = cli("attest", f"{layout}:agent", "--benchmark", f"{layout}:bench", "--key", tmp_path / "verifier.key",
              "--issuer", did, "--state", tmp_path / "state", "-o", tmp_path / "out", "--games", 12, "--jobs", 2,
              "--json")
    assert res.exit_code == 1, res.output  # 12 games cannot pass the gate; every game was played
    preds = [json.loads(base64.b64decode(json.loads(p.read_bytes())["payload"]))["predicate"]
             for p in sorted((tmp_path / "out" / "games").glob("*.dsse.json"))]
    fails = [p for p in preds if p["outcome"] == "model-fail"]
    assert fails, [p["outcome"] for p in preds]
    digests = [p["review"]["failureDigest"] for p in fails]
    assert all(d.startswith("hmac-sha256:") for d in digests)
    # the digest keys the grader's own text, not a constant: tasks fail with different texts. One text may
    # recur (a task drawn twice, or a cut-off agent's half-written submission), but never on as many tasks as
    # the identical-failure rule needs to fire (its finding would withhold the run)
    tasks_by_text: dict[str, set[str]] = {}
    for p in fails:
        tasks_by_text.setdefault(p["review"]["failureDigest"], set()).add(p["taskCommitment"])
    assert len(tasks_by_text) > 1 or len({p["taskCommitment"] for p in fails}) == 1, [p["review"] for p in fails]
    assert all(len(ts) < hr.IDENTICAL_TEXT_MIN_TASKS for ts in tasks_by_text.values()), tasks_by_text
    assert not any("withheldBy" in p.get("review", {}) for p in preds)
    summary = json.loads((tmp_path / "out" / "result.json").read_text())["run"]["harnessReview"]
    assert summary["findings"] == [] and summary["withheld"] == [] and len(summary["rules"]) == 6
