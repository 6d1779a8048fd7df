"""TrueSkill against the ``trueskill`` package as oracle, plus level rounding and tiers."""

from __future__ import annotations

import math
import random

import pytest

from acx_oci.model import rating as ts

oracle = pytest.importorskip("trueskill")


def _oracle_env() -> object:
    # The same model as ours: tau is applied by hand before each game, draws are impossible,
    # and the opponent is (difficulty, 1e-9) because the library refuses sigma 0.
    return oracle.TrueSkill(mu=25.0, sigma=25.0 / 3.0, beta=25.0 / 6.0, tau=0.0, draw_probability=0.0,
                            backend="mpmath")


@pytest.mark.parametrize("seed", [1, 2])
def test_agrees_with_trueskill_package_over_1000_games(seed: int) -> None:
    env = _oracle_env()
    rng = random.Random(seed)
    competence = rng.uniform(15, 45)
    ours = ts.Rating()
    theirs = env.create_rating()  # type: ignore[attr-defined]
    worst = 0.0
    for _ in range(1000):
        d = rng.uniform(15, 48)
        won = rng.random() < ts.win_probability(competence, d)
        raised = env.create_rating(float(theirs.mu), math.sqrt(float(theirs.sigma) ** 2 + ts.TAU**2))  # type: ignore[attr-defined]
        opp = env.create_rating(d, 1e-9)  # type: ignore[attr-defined]
        ranks = [0, 1] if won else [1, 0]
        (theirs,), _ = env.rate([(raised,), (opp,)], ranks=ranks)  # type: ignore[attr-defined]
        ours = ts.rate(ours, d, won)
        worst = max(worst, abs(ours.mu - float(theirs.mu)), abs(ours.sigma - float(theirs.sigma)))
        assert abs(ours.mu - float(theirs.mu)) < 1e-9
        assert abs(ours.sigma - float(theirs.sigma)) < 1e-9
    assert worst < 1e-9


def test_extreme_upsets_stay_finite() -> None:
    r = ts.Rating(10.0, 0.5)
    for _ in range(50):
        r = ts.rate(r, 200.0, True)
        assert math.isfinite(r.mu) and math.isfinite(r.sigma) and r.sigma > 0
    r2 = ts.rate(ts.Rating(200.0, 0.5), 10.0, False)
    assert math.isfinite(r2.mu) and r2.mu < 200.0


def test_replay_matches_stepwise() -> None:
    games = [(20.0, True), (30.0, False), (25.0, True)]
    r = ts.Rating()
    for d, w in games:
        r = ts.rate(r, d, w)
    assert ts.rate_games(games) == r


@pytest.mark.parametrize(("r", "level"), [(-3.0, 0), (0.49, 0), (0.5, 1), (2.5, 3), (4.5, 5), (29.34, 29), (29.5, 30)])
def test_level_rounds_half_up(r: float, level: int) -> None:
    assert ts.acx_level(r) == level


@pytest.mark.parametrize(("level", "tier"), [(0, "intern"), (4, "intern"), (5, "junior"), (10, "mid"), (15, "senior"),
                                             (20, "staff"), (25, "principal"), (29, "principal"),
                                             (30, "distinguished"), (35, "legend"), (99, "legend")])
def test_career_tiers(level: int, tier: str) -> None:
    assert ts.career_tier(level) == tier


def test_conservative_and_win_probability() -> None:
    assert ts.conservative(ts.Rating(33.0, 1.2)) == pytest.approx(29.4)
    assert ts.win_probability(30, 30) == pytest.approx(0.5)
    assert ts.win_probability(33, 15) > 0.99
