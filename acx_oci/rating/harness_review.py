"""The harness review as a rule table (pure): which games the examiner, not the model, is to blame for.

Every rule reads only what the signed game records carry (:func:`view` turns a record's predicate into a
:class:`GameView`), so the verifier (before rating) and a consumer replaying the records (evaluation/replay.py)
run the same function over the same values and reach the same withheld set. A rule is *diagnostic* (a finding
people read; it never withholds a game nor changes a verdict) or *verdict-bearing* (it withholds the games it
names, or the whole run with a reason code). Cell rules run first; the share rules then count the games they
withheld as unrated, so withholding can never hide more than a tenth of the draw before the whole run is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from acx_oci import reasons
from acx_oci.model import INVALID, LANE_ERROR, MODEL_FAIL, WITHHELD

DIAGNOSTIC = "diagnostic"
VERDICT_BEARING = "verdict-bearing"
IDENTICAL_TEXT_MIN_TASKS = 5  # this many unrelated tasks failing with one grader text: the examiner broke
STARVED_CPU_SHARE = 0.05  # killed at the wall clock having used under 5% of it on a CPU ...
STARVED_WAIT_SHARE = 0.25  # ... while waiting to be run for at least a quarter of it: the host starved the game
PROVIDER_FAILURE_SHARE = 0.10  # of a run's model-lane games
UNRATED_SHARE = 0.10  # of the drawn games: lane-error, withheld or invalid
_E_LINE = re.compile(r"^E {2,}(.+)$", re.MULTILINE)
_MAX_TEXT = 4096


@dataclass(frozen=True)
class GameView:
    """What the rules may read of one game, as played (before the review withheld anything)."""

    number: int
    task: str  # the task commitment: distinct tasks, never their ids
    outcome: str
    containment: bool | None = None
    provider: str | None = None  # the models-file entry a model lane called; None: no model lane
    upstream_failed: bool = False
    failure: str | None = None  # a keyed digest of the grader's error text (model-fail games)
    timed_out: bool = False
    cpu_seconds: float | None = None
    runqueue_seconds: float | None = None
    limit_seconds: float | None = None


@dataclass(frozen=True)
class Finding:
    """One rule's finding: the games it concerns, those it withholds, and (whole run) the reason it gives."""

    rule: str
    classification: str
    detail: str
    games: tuple[int, ...] = ()
    withheld: tuple[int, ...] = ()
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.classification == DIAGNOSTIC and (self.withheld or self.reason):
            raise ValueError(f"harness review: diagnostic rule {self.rule} may not withhold or refuse")

    def to_json(self) -> dict[str, Any]:
        """The finding as ``acx:harnessReview.findings[]`` and ``exam report`` carry it."""
        return {"rule": self.rule, "classification": self.classification, "games": list(self.games),
                "withheld": list(self.withheld), "detail": self.detail}


@dataclass(frozen=True)
class ReviewRule:
    """A row of the table: its name, classification, what it reads and what it withholds."""

    name: str
    classification: str
    reads: str
    withholds: str
    check: Callable[[Sequence[GameView], int, Mapping[int, str]], Finding | None] = field(repr=False)


@dataclass(frozen=True)
class Review:
    """The findings of every rule that fired, the withheld games (number -> rule) and the run's reasons."""

    findings: tuple[Finding, ...] = ()
    withheld: Mapping[int, str] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``acx:harnessReview``: the rules applied, their findings and the withheld games."""
        return {"rules": [r.name for r in RULES], "findings": [f.to_json() for f in self.findings],
                "withheld": sorted(self.withheld)}


def failure_text(grader_stdout: bytes) -> str | None:
    """The grader's error text (pytest's ``E`` lines, distinct and sorted); None when it printed none."""
    lines = sorted({m.strip() for m in _E_LINE.findall(grader_stdout.decode("utf-8", "replace"))})
    return "\n".join(lines)[:_MAX_TEXT] or None


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def view(pred: Mapping[str, Any]) -> GameView:
    """A game record's predicate as the rules read it; a game the review withheld shows its played outcome."""
    rv = pred.get("review") if isinstance(pred.get("review"), dict) else {}
    assert isinstance(rv, dict)
    model, cond = pred.get("model"), pred.get("conditions")
    played = rv.get("played") if "withheldBy" in rv else pred.get("outcome")
    contained = cond.get("containment") if isinstance(cond, dict) else None
    failure = rv.get("failureDigest")
    return GameView(
        number=int(pred["game"]), task=str(pred.get("taskCommitment")), outcome=str(played),
        containment=contained if isinstance(contained, bool) else None,
        provider=str(model.get("id")) if isinstance(model, dict) else None,
        upstream_failed=rv.get("lane") == "upstream", failure=failure if isinstance(failure, str) else None,
        timed_out=rv.get("timedOut") is True, cpu_seconds=_num(rv.get("cpuSeconds")),
        runqueue_seconds=_num(rv.get("runqueueSeconds")), limit_seconds=_num(rv.get("limitSeconds")))


# --- the rules ---------------------------------------------------------------------------------------------


def _containment(games: Sequence[GameView], draws: int, withheld: Mapping[int, str]) -> Finding | None:
    unproven = tuple(g.number for g in games if g.containment is False)
    if not unproven:
        return None
    return Finding("containment-unproven", VERDICT_BEARING, "the sandbox's containment was not proven on this run",
                   unproven, reason=f"{reasons.CONTAINMENT_UNPROVEN}: the sandbox's containment was not proven on "
                                    "this run; every game is withheld")


def _identical_text(games: Sequence[GameView], draws: int, withheld: Mapping[int, str]) -> Finding | None:
    by_text: dict[str, list[GameView]] = {}
    for g in games:
        if g.outcome == MODEL_FAIL and g.failure:
            by_text.setdefault(g.failure, []).append(g)
    hit = sorted(g.number for gs in by_text.values() if len({g.task for g in gs}) >= IDENTICAL_TEXT_MIN_TASKS
                 for g in gs)
    if not hit:
        return None
    return Finding("identical-failure-text", VERDICT_BEARING,
                   f"{len(hit)} model-fail games of unrelated tasks failed with the same grader error text "
                   f"(>= {IDENTICAL_TEXT_MIN_TASKS} tasks): the examiner, not the model; those games are withheld",
                   tuple(hit), tuple(hit))


def _starved(g: GameView) -> bool:
    if not (g.timed_out and g.outcome == MODEL_FAIL and g.limit_seconds and g.cpu_seconds is not None
            and g.runqueue_seconds is not None):
        return False
    return (g.cpu_seconds < STARVED_CPU_SHARE * g.limit_seconds
            and g.runqueue_seconds >= STARVED_WAIT_SHARE * g.limit_seconds)


def _starvation(games: Sequence[GameView], draws: int, withheld: Mapping[int, str]) -> Finding | None:
    hit = tuple(g.number for g in games if _starved(g))
    if not hit:
        return None
    return Finding("starvation", VERDICT_BEARING,
                   f"{len(hit)} game(s) killed at the wall clock having run under {STARVED_CPU_SHARE:.0%} of it "
                   f"while waiting for a CPU for {STARVED_WAIT_SHARE:.0%} or more: the host starved them; withheld",
                   hit, hit)


def _across_providers(games: Sequence[GameView], draws: int, withheld: Mapping[int, str]) -> Finding | None:
    if len({g.provider for g in games if g.provider}) < 2:
        return None
    by_text: dict[str, set[str]] = {}
    for g in games:
        if g.provider and g.failure:
            by_text.setdefault(g.failure, set()).add(g.provider)
    shared = {t for t, ps in by_text.items() if len(ps) >= 2}
    hit = tuple(g.number for g in games if g.failure in shared)
    if not hit:
        return None
    return Finding("identical-failure-across-providers", DIAGNOSTIC,
                   f"{len(hit)} game(s) failed with the same text under different providers: look at the harness "
                   "(relay, proxy, grader) before blaming a provider", hit)


def _provider_share(games: Sequence[GameView], draws: int, withheld: Mapping[int, str]) -> Finding | None:
    lanes = [g for g in games if g.provider]
    failed = tuple(g.number for g in lanes if g.upstream_failed)
    if not lanes or len(failed) <= PROVIDER_FAILURE_SHARE * len(lanes):
        return None
    return Finding("provider-failure-share", VERDICT_BEARING,
                   f"the model provider failed in {len(failed)} of {len(lanes)} model-lane games", failed,
                   reason=f"{reasons.EXAMINER_UNRELIABLE}: the model provider failed in {len(failed)} of "
                          f"{len(lanes)} model-lane games (more than {PROVIDER_FAILURE_SHARE:.0%}); the run "
                          "cannot tell the model's failures from the provider's")


def _unrated_share(games: Sequence[GameView], draws: int, withheld: Mapping[int, str]) -> Finding | None:
    broken = tuple(g.number for g in games if g.outcome in (LANE_ERROR, WITHHELD, INVALID) or g.number in withheld)
    if not draws or len(broken) <= UNRATED_SHARE * draws:
        return None
    return Finding("unrated-share", VERDICT_BEARING,
                   f"{len(broken)} of {draws} drawn games ended lane-error, withheld or invalid", broken,
                   reason=f"{reasons.EXAMINER_UNRELIABLE}: {len(broken)} of {draws} drawn games ended lane-error, "
                          "withheld or invalid (more than 10%); a suspect examiner may not blame the model")


RULES: tuple[ReviewRule, ...] = (
    ReviewRule("containment-unproven", VERDICT_BEARING, "conditions.containment", "the whole run", _containment),
    ReviewRule("identical-failure-text", VERDICT_BEARING, "review.failureDigest, taskCommitment of model-fail games",
         "the games sharing one grader error text over >= 5 unrelated tasks", _identical_text),
    ReviewRule("starvation", VERDICT_BEARING, "review.timedOut, cpuSeconds, runqueueSeconds, limitSeconds",
         "the games the host starved", _starvation),
    ReviewRule("identical-failure-across-providers", DIAGNOSTIC, "model.id, review.failureDigest", "nothing",
         _across_providers),
    ReviewRule("provider-failure-share", VERDICT_BEARING, "model.id, review.lane",
         "the whole run, above 10% of model-lane games", _provider_share),
    ReviewRule("unrated-share", VERDICT_BEARING, "outcome (and the games withheld above)",
         "the whole run, above 10% of the draw", _unrated_share),
)


def review(games: Sequence[GameView], draws: int) -> Review:
    """Run the table over the games as played: the withheld games and the whole-run reasons, deterministically.

    Unproven containment withholds everything and stops there (the examiner never ran, so it is not "unreliable").
    """
    findings: list[Finding] = []
    withheld: dict[int, str] = {}
    for rule in RULES:
        found = rule.check(games, draws, withheld)
        if found is None:
            continue
        findings.append(found)
        for n in found.withheld:
            withheld.setdefault(n, found.rule)
        if found.rule == "containment-unproven":
            break
    run_reasons = tuple(f.reason for f in findings if f.reason)
    return Review(tuple(findings), withheld, run_reasons)


def table() -> list[dict[str, str]]:
    """The rule table as data (docs and ``exam report`` print it)."""
    return [{"rule": r.name, "classification": r.classification, "reads": r.reads, "withholds": r.withholds}
            for r in RULES]
