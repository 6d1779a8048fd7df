"""Draw order, the reference solver, the sigma gate, and signed, replayable game records."""

from __future__ import annotations

import hashlib
import json

import pytest

from acx_oci.crypto import generate_identity
from acx_oci.errors import UsageError, VerificationError
from acx_oci.model import benchmark as bmodel
from acx_oci.model import gamerecords
from acx_oci.model import rating as ts
from acx_oci.rating import SolverResult, engine
from acx_oci.solvers import ReferenceSolver

SEAL_KEY = bytes(range(32))
ROM = "sha256:" + hashlib.sha256(b"demo cartridge ROM").hexdigest()


@pytest.fixture(scope="module")
def demo() -> tuple[bmodel.Benchmark, list[dict[str, object]]]:
    bench = bmodel.from_document(bmodel.demo_document())
    _, held = bmodel.split(bench, SEAL_KEY)
    return bench, held


def _run(demo: tuple[bmodel.Benchmark, list[dict[str, object]]], competence: float, games: int | None = None,
         rom: str = ROM) -> engine.Result:
    bench, held = demo
    return engine.run(rom_digest=rom, benchmark_digest=bench.digest, held_out=held,
                      commitment_key=bmodel.commitment_key(SEAL_KEY), solver=ReferenceSolver(competence),
                      params=engine.Params(games=games))


def test_draw_order_is_the_specified_hash_order(demo: tuple[bmodel.Benchmark, list[dict[str, object]]]) -> None:
    _, held = demo
    order = engine.draw_order(ROM, held)
    keys = [hashlib.sha256((ROM + "|draw|" + str(t["id"])).encode()).hexdigest() for t in order]
    assert keys == sorted(keys)
    assert [t["id"] for t in engine.draw_order(ROM, list(reversed(held)))] == [t["id"] for t in order]
    other = engine.draw_order("sha256:" + "1" * 64, held)
    assert [t["id"] for t in other] != [t["id"] for t in order]  # ROM-specific


def test_weak_agent_is_not_issued_with_the_gate_reason(demo: tuple[bmodel.Benchmark, list[dict[str, object]]]) -> None:
    r = _run(demo, 14, games=50)
    assert r.rated == 50 and not r.issued
    assert r.rating.sigma >= 1.5
    assert any("sigma" in reason and "sigmaMax 1.5" in reason for reason in r.reasons)


def test_strong_agent_is_issued_principal_or_distinguished(
        demo: tuple[bmodel.Benchmark, list[dict[str, object]]]) -> None:
    r = _run(demo, 33)
    assert r.draws == r.rated == 90, "default games = min(90, held-out size)"
    assert r.issued and not r.reasons
    assert abs(r.rating.mu - 33) < 4 and r.rating.sigma < 1.5
    assert r.tier in ("principal", "distinguished")
    assert 0.35 < r.pass_rate < 0.75
    assert r.params["games"] == 90 and r.params["sigmaMax"] == 1.5 and r.params["minGames"] == 30
    assert r.params["beta"] == 25 / 6 and r.params["tau"] == 25 / 300


def test_runs_are_reproducible(demo: tuple[bmodel.Benchmark, list[dict[str, object]]]) -> None:
    a, b = _run(demo, 33), _run(demo, 33)
    assert [g.predicate for g in a.games] == [g.predicate for g in b.games]
    assert a.rating == b.rating


def test_games_and_gate_parameters(demo: tuple[bmodel.Benchmark, list[dict[str, object]]]) -> None:
    with pytest.raises(UsageError, match="exceeds the 96 held-out"):
        _run(demo, 33, games=97)
    r = _run(demo, 33, games=20)
    assert not r.issued and any("fewer than minGames 30" in x for x in r.reasons)


def test_unrated_outcomes_do_not_move_the_rating(demo: tuple[bmodel.Benchmark, list[dict[str, object]]]) -> None:
    bench, held = demo

    class Flaky:
        def descriptor(self) -> dict[str, object]:
            return {"name": "flaky"}

        def record_fields(self) -> dict[str, object]:
            return {}

        def solve(self, task: dict[str, object], rom_digest: str) -> SolverResult:
            n = int(str(task["id"])[-1])
            return SolverResult(["lane-error", "invalid", "withheld", "certified-pass", "model-fail"][n % 5])

    r = engine.run(rom_digest=ROM, benchmark_digest=bench.digest, held_out=held, commitment_key=b"k" * 32,
                   solver=Flaky(), params=engine.Params(games=40))
    assert r.rated == sum(g.outcome in gamerecords.RATED for g in r.games) < 40
    for g in r.games:
        if g.outcome not in gamerecords.RATED:
            assert g.predicate["ratingBefore"] == g.predicate["ratingAfter"]
    assert gamerecords.rerate([g.predicate for g in r.games]) == r.rating
    # 40% of the draws ended lane-error or withheld: the examiner is suspect, nothing is issued.
    assert not r.issued and r.reasons[0].startswith("examiner_unreliable")


def test_game_records_sign_verify_and_replay(demo: tuple[bmodel.Benchmark, list[dict[str, object]]]) -> None:
    r = _run(demo, 33, games=35)
    v1, v2 = generate_identity(), generate_identity("did:web:verifier.example")
    recs1 = [gamerecords.sign_game(g.predicate, v1) for g in r.games]
    recs2 = [gamerecords.sign_game(g.predicate, v2) for g in r.games]
    preds = []
    for rec, game in zip(recs1, r.games, strict=True):
        pred = gamerecords.verify_game(rec.raw, [v1.public_bytes], rec.digest)
        assert set(pred) == gamerecords.PREDICATE_FIELDS
        assert game.task_id.encode() not in rec.raw and game.task_id not in json.dumps(rec.envelope)
        assert pred["taskCommitment"] == gamerecords.task_commitment(bmodel.commitment_key(SEAL_KEY), game.task_id)
        preds.append(pred)
        with pytest.raises(VerificationError):
            gamerecords.verify_game(rec.raw, [v2.public_bytes])
    # a different verifier key signs the same predicates
    assert [x.predicate for x in recs2] == [x.predicate for x in recs1]
    replayed = gamerecords.rerate(reversed(preds))
    assert replayed == r.rating
    forged = [dict(p) for p in preds]
    forged[3]["outcome"] = "certified-pass" if forged[3]["outcome"] == "model-fail" else "model-fail"
    with pytest.raises(VerificationError, match="game 4"):
        gamerecords.rerate(forged)
    with pytest.raises(VerificationError, match=r"1\.\.N"):
        gamerecords.rerate(preds[1:])


def test_reference_solver_is_calibrated() -> None:
    # Over many tasks, the pass frequency matches the TrueSkill win probability.
    s = ReferenceSolver(30)
    for d in (20.0, 30.0, 40.0):
        wins = sum(s.solve({"id": f"t-{i}", "difficulty": d}, ROM).outcome == "certified-pass" for i in range(4000))
        assert abs(wins / 4000 - ts.win_probability(30, d)) < 0.03


def test_impossible_exam_passed_means_cheating(demo: tuple[bmodel.Benchmark, list[dict[str, object]]]) -> None:
    """A pass on an impossible exam invalidates the whole run; impossible exams are drawn but never rated."""
    bench, held = demo
    marked = [dict(t, impossible=True) if i % 10 == 0 else t for i, t in enumerate(held)]

    class PassesEverything:
        def descriptor(self) -> dict[str, object]:
            return {"name": "gamer"}

        def record_fields(self) -> dict[str, object]:
            return {}

        def solve(self, task: dict[str, object], rom_digest: str) -> SolverResult:
            return SolverResult("certified-pass")

    r = engine.run(rom_digest=ROM, benchmark_digest=bench.digest, held_out=marked, commitment_key=b"k" * 32,
                   solver=PassesEverything(), params=engine.Params(games=60))
    canaries = [g for g in r.games if g.predicate.get("canary")]
    assert canaries and r.rated == 60 - len(canaries)
    assert not r.issued and r.reasons[0].startswith("cheating_detected")
    for g in canaries:
        assert g.predicate["ratingBefore"] == g.predicate["ratingAfter"]
    assert gamerecords.rerate([g.predicate for g in r.games]) == r.rating
    # The reference solver never games a grader: it fails every impossible exam, and is unaffected otherwise.
    honest = engine.run(rom_digest=ROM, benchmark_digest=bench.digest, held_out=marked, commitment_key=b"k" * 32,
                        solver=ReferenceSolver(33), params=engine.Params(games=60))
    assert all(g.outcome == "model-fail" for g in honest.games if g.predicate.get("canary"))
    assert not any(reason.startswith("cheating_detected") for reason in honest.reasons)


@pytest.mark.parametrize("jobs", [1, 3])
def test_progress_sees_each_game_while_the_rest_are_still_to_play(
        demo: tuple[bmodel.Benchmark, list[dict[str, object]]], jobs: int) -> None:
    """attest's progress bar said "0/90 starting" until the last game was played, then jumped to 90/90: on_game
    ran only after every game. Now each game is rated and reported as it arrives, in draw order."""
    bench, held = demo
    real = ReferenceSolver(33)
    solved: list[str] = []
    seen: list[tuple[int, int]] = []  # (game number, games the solver had finished by then)

    class Counting:  # the real reference solver, counting the games it has played
        def descriptor(self) -> dict[str, object]:
            return real.descriptor()

        def record_fields(self) -> dict[str, object]:
            return real.record_fields()

        def solve(self, task: dict[str, object], rom_digest: str) -> SolverResult:
            res = real.solve(task, rom_digest)
            solved.append(str(task["id"]))
            return res

    r = engine.run(rom_digest=ROM, benchmark_digest=bench.digest, held_out=held,
                   commitment_key=bmodel.commitment_key(SEAL_KEY), solver=Counting(), params=engine.Params(games=40),
                   jobs=jobs, on_game=lambda g, rating: seen.append((g.number, len(solved))))
    assert [n for n, _ in seen] == list(range(1, 41))
    if jobs == 1:  # game n is reported before game n+1 is played (with jobs > 1 the pool runs ahead of it)
        assert all(done == n for n, done in seen), f"reported only after this many games were played: {seen[:3]}"
    assert r.games == tuple(_run(demo, 33, games=40).games), "the same games and records as before"
