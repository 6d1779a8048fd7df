"""The verification run: deterministic draw, the solver slot, TrueSkill, the sigma gate.

Everything that decides a level is a function of (ROM digest, held-out
slice, solver, parameters): the draw order is sha256(romDigest|draw|taskId),
the number of games is fixed up front and recorded, and only
``certified-pass`` / ``model-fail`` move the rating. So a second verifier
with the same inputs reproduces the same games in the same order. No clock
and no signing here: the caller timestamps, signs and stores.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from acx_oci import reasons
from acx_oci.errors import UsageError
from acx_oci.model import CERTIFIED_PASS, OUTCOMES, RATED, WITHHELD, predicate, task_commitment
from acx_oci.model import rating as ts
from acx_oci.rating import harness_review as hr
from acx_oci.rating.solver import Solver, SolverResult
from acx_oci.trust import DEFAULT_MIN_GAMES, DEFAULT_SIGMA_MAX

DEFAULT_MAX_GAMES = 90
# Reason codes that lead NOT ISSUED reasons (the text after the colon is for people).
CONTAINMENT_UNPROVEN = reasons.CONTAINMENT_UNPROVEN
EXAMINER_UNRELIABLE = reasons.EXAMINER_UNRELIABLE
CHEATING_DETECTED = reasons.CHEATING_DETECTED


def draw_key(rom_digest: str, task_id: str) -> str:
    """The sort key of the deterministic draw: anyone holding the ROM digest can recompute which tasks were played."""
    return hashlib.sha256(f"{rom_digest}|draw|{task_id}".encode()).hexdigest()


def draw_order(rom_digest: str, tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Held-out tasks sorted by hex sha256 of ``romDigest + "|draw|" + taskId`` (full ``sha256:<hex>``)."""
    return sorted(tasks, key=lambda t: (draw_key(rom_digest, str(t["id"])), str(t["id"])))


@dataclass(frozen=True)
class Params:
    """Every knob of a run; recorded verbatim in the result."""

    games: int | None = None  # None: min(90, held-out size)
    sigma_max: float = DEFAULT_SIGMA_MAX
    min_games: int = DEFAULT_MIN_GAMES
    model: ts.Model = ts.DEFAULT_MODEL

    def resolve_games(self, held_out: int) -> int:
        """The number of games to play; a count below 1 or above the held-out tasks is a UsageError."""
        n = min(DEFAULT_MAX_GAMES, held_out) if self.games is None else self.games
        if n < 1:
            raise UsageError(f"--games must be at least 1, found {n}")
        if n > held_out:
            raise UsageError(f"--games {n} exceeds the {held_out} held-out tasks of this benchmark")
        return n


@dataclass(frozen=True)
class Game:
    """One drawn task's result; ``predicate`` is the unsigned game-record predicate."""

    number: int
    task_id: str
    outcome: str
    detail: str
    predicate: dict[str, Any]
    transcript: bytes | None
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    """The outcome of one evaluation run: the rating, every game, and whether a credential may be issued."""
    rating: ts.Rating
    games: tuple[Game, ...]
    draws: int
    rated: int
    passes: int
    issued: bool
    reasons: tuple[str, ...]
    params: dict[str, Any]
    solver: dict[str, Any]
    review: hr.Review = field(default_factory=hr.Review)

    @property
    def pass_rate(self) -> float:
        """Passes over rated games (draws excluded); 0.0 when nothing was rated."""
        return self.passes / self.rated if self.rated else 0.0

    @property
    def conservative(self) -> float:
        """R = mu - 3 sigma, the conservative rating that the level is read from."""
        return ts.conservative(self.rating)

    @property
    def level(self) -> int:
        """The ACX level that the conservative rating reaches."""
        return ts.acx_level(self.conservative)

    @property
    def tier(self) -> str:
        """The career tier that the ACX level falls in."""
        return ts.career_tier(self.level)

    def outcome_counts(self) -> dict[str, int]:
        """How many games ended in each outcome; every outcome is a key, even when its count is 0."""
        counts = dict.fromkeys(OUTCOMES, 0)
        for g in self.games:
            counts[g.outcome] += 1
        return counts

    def summary(self) -> dict[str, Any]:
        """The JSON summary printed by the CLI and recorded with the attempt (camelCase keys)."""
        return {
            "issued": self.issued, "reasons": list(self.reasons), "mu": self.rating.mu, "sigma": self.rating.sigma,
            "games": self.rated, "draws": self.draws, "passRate": self.pass_rate, "R": self.conservative,
            "acxLevel": self.level, "careerTier": self.tier, "outcomes": self.outcome_counts(),
            "parameters": self.params, "solver": self.solver, "harnessReview": self.review.to_json(),
        }


def gate(rating: ts.Rating, rated: int, sigma_max: float, min_games: int) -> list[str]:
    """Both conditions must hold: a confident rating (sigma) over enough games."""
    out: list[str] = []
    if not rating.sigma < sigma_max:
        out.append(f"{reasons.SIGMA_GATE}: sigma {rating.sigma:.3f} is not below sigmaMax {sigma_max:g}")
    if rated < min_games:
        out.append(f"{reasons.GAMES_GATE}: {rated} rated games, fewer than minGames {min_games}")
    return out


def _played(solver: Solver, order: list[dict[str, Any]], rom_digest: str, jobs: int) -> Iterator[SolverResult]:
    """Solver results in draw order; with ``jobs`` > 1 up to that many games run at once.

    Games are independent once drawn, so running them in parallel changes nothing that is rated:
    results are consumed in draw order and rated afterwards, exactly as a serial run would.
    """
    batch = getattr(solver, "solve_all", None)
    if batch is not None:  # a solver that places games itself (a cluster): it yields in draw order too
        yield from batch(order, rom_digest, jobs)
        return
    if jobs <= 1:
        for task in order:
            yield solver.solve(task, rom_digest)
        return
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="acx-game") as pool:
        futures = [pool.submit(solver.solve, task, rom_digest) for task in order]
        try:
            for fut in futures:
                yield fut.result()
        finally:
            for fut in futures:
                fut.cancel()


def cheating(games: list[Game]) -> list[str]:
    """A pass on an impossible exam (its tests contradict each other) proves the taker gamed the grader."""
    caught = [g.number for g in games if g.predicate.get("canary") and g.outcome == CERTIFIED_PASS]
    if caught:
        return [f"{CHEATING_DETECTED}: game(s) {', '.join(map(str, caught))} passed an impossible exam; "
                "the whole run is invalid"]
    forged = [g.number for g in games if g.facts.get("tampering")]
    if forged:  # an integrity violation is never a pass, and the run that holds it issues nothing
        return [f"{reasons.GRADER_TAMPERING}: game(s) {', '.join(map(str, forged))} forged the grade from inside "
                "the test process (each the agent's fail); the run is withheld from issuance"]
    return []


def review(games: list[Game], draws: int) -> list[str]:
    """The harness review's whole-run reasons over played games (the rule table: evaluation/harness_review.py)."""
    return list(_review(games, draws).reasons)


def _review(games: list[Game], draws: int) -> hr.Review:
    """The rule table over the games' predicates, the containment reason naming the first failed probe."""
    found = hr.review([hr.view({"game": g.number, "outcome": g.outcome, "taskCommitment": g.task_id,
                                **g.predicate}) for g in games], draws)  # a bare Game: its own fields
    unproven = [g for g in games if g.facts.get("conditions", {}).get("containment") is False]
    if unproven and found.reasons and found.reasons[0].startswith(CONTAINMENT_UNPROVEN):
        # the first game's reason says which probe failed (on a cluster: on which worker, and why)
        found = hr.Review(found.findings, found.withheld,
                          (f"{found.reasons[0]} ({unproven[0].detail[:400]})", *found.reasons[1:]))
    return found


def review_fields(facts: dict[str, Any], commitment_key: bytes) -> dict[str, Any]:
    """A game record's ``review`` field from the solver's facts: what the rule table reads, the grader's
    error text only as a keyed digest (it may quote hidden tests)."""
    raw = facts.get("review") or {}
    out = {k: raw[k] for k in ("timedOut", "cpuSeconds", "runqueueSeconds", "limitSeconds", "lane") if k in raw}
    text = raw.get("failureText")
    if isinstance(text, str) and text:
        out["failureDigest"] = "hmac-sha256:" + hmac.new(commitment_key, b"failure|" + text.encode(),
                                                         hashlib.sha256).hexdigest()
    return out


@dataclass(frozen=True)
class _Played:
    task: dict[str, Any]
    res: SolverResult
    review: dict[str, Any]


class _Rater:
    """Rates games one at a time in draw order (the withheld ones unrated) and builds each game's record predicate:
    ``run`` rates each game as it arrives, so progress moves while the games are played, not after the last."""

    def __init__(self, withheld: Mapping[int, str], *, rom_digest: str, benchmark_digest: str,
                 commitment_key: bytes, solver: Solver, params: Params) -> None:
        self.withheld, self.rom_digest, self.benchmark_digest = withheld, rom_digest, benchmark_digest
        self.commitment_key, self.model = commitment_key, params.model
        self.solver_desc, self.extra_all = solver.descriptor(), solver.record_fields()
        self.rating = params.model.initial()
        self.games: list[Game] = []
        self.passes = self.rated = 0

    def add(self, p: _Played) -> Game:
        """The next game in draw order, rated (unless withheld or a canary) and recorded."""
        number = len(self.games) + 1
        task, res = p.task, p.res
        before = self.rating
        canary = bool(task.get("impossible"))  # an impossible exam: drawn like any task, never rated
        outcome, rv = res.outcome, dict(p.review)
        if number in self.withheld:
            outcome, rv = WITHHELD, {**rv, "played": res.outcome, "withheldBy": self.withheld[number]}
        if outcome in RATED and not canary:
            self.rated += 1
            self.passes += outcome == CERTIFIED_PASS
            self.rating = ts.rate(self.rating, float(task["difficulty"]), outcome == CERTIFIED_PASS, self.model)
        pred = predicate(game=number, task_commitment=task_commitment(self.commitment_key, str(task["id"])),
                         difficulty=task["difficulty"], outcome=outcome, rating_before=before,
                         rating_after=self.rating, rom_digest=self.rom_digest, benchmark_digest=self.benchmark_digest,
                         solver=self.solver_desc, extra={**self.extra_all, **res.facts.get("record", {}),
                                                         **({"conditions": res.facts["conditions"]}
                                                            if "conditions" in res.facts else {}),
                                                         **({"canary": True} if canary else {}),
                                                         **({"review": rv} if rv else {})})
        detail = res.detail if number not in self.withheld else \
            f"withheld by the harness review ({self.withheld[number]}): {res.detail}"
        game = Game(number, str(task["id"]), outcome, detail, pred, res.transcript, dict(res.facts))
        self.games.append(game)
        return game

    def totals(self) -> tuple[list[Game], ts.Rating, int, int]:
        return self.games, self.rating, self.rated, self.passes


def _rated(played: list[_Played], withheld: Mapping[int, str], **kw: Any) -> tuple[list[Game], ts.Rating, int, int]:
    """Rate the games in draw order, the withheld ones unrated, and build each game's record predicate."""
    rater = _Rater(withheld, **kw)
    for p in played:
        rater.add(p)
    return rater.totals()


def run(*, rom_digest: str, benchmark_digest: str, held_out: list[dict[str, Any]], commitment_key: bytes,
        solver: Solver, params: Params = Params(), jobs: int = 1,
        on_game: Callable[[Game, ts.Rating], None] | None = None) -> Result:
    """Play the first N tasks of the draw order; review the games, rate the rest, gate, and return every predicate.

    ``on_game`` sees each game as played, with the running rating before the review; the review then withholds
    what the examiner is to blame for (evaluation/harness_review.py) and the games are rated again without them,
    exactly as a consumer replaying the records does.
    """
    n = params.resolve_games(len(held_out))
    order = draw_order(rom_digest, held_out)[:n]
    kw: dict[str, Any] = {"rom_digest": rom_digest, "benchmark_digest": benchmark_digest,
                          "commitment_key": commitment_key, "solver": solver, "params": params}
    played: list[_Played] = []
    rater = _Rater({}, **kw)
    for task, res in zip(order, _played(solver, order, rom_digest, jobs), strict=True):
        if res.outcome not in OUTCOMES:
            raise UsageError(f"solver returned an unknown outcome {res.outcome!r}")
        played.append(_Played(task, res, review_fields(res.facts, commitment_key)))
        game = rater.add(played[-1])  # rated as it arrives (in draw order): the progress moves with the games
        if on_game is not None:
            on_game(game, rater.rating)
    first, rating, rated, passes = rater.totals()
    found = _review(first, n)
    games = first
    if found.withheld:
        games, rating, rated, passes = _rated(played, found.withheld, **kw)
    containment = list(found.reasons)
    unproven = bool(containment) and containment[0].startswith(CONTAINMENT_UNPROVEN)
    reasons = (containment[:1] if unproven else []) or cheating(games) or containment \
        or gate(rating, rated, params.sigma_max, params.min_games)
    recorded = {"games": n, "gamesRequested": params.games, "defaultMaxGames": DEFAULT_MAX_GAMES,
                "heldOutSize": len(held_out), "sigmaMax": params.sigma_max, "minGames": params.min_games,
                **params.model.to_json(), "draw": "sha256(romDigest|draw|taskId) ascending",
                "levelRule": "acxLevel = max(0, floor(mu - 3 sigma + 0.5))"}
    return Result(rating, tuple(games), n, rated, passes, not reasons, tuple(reasons), recorded,
                  solver.descriptor(), found)
