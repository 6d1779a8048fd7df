"""TrueSkill (Herbrich, Minka, Graepel 2006) for one player against fixed opponents.

Every graded task is a 1v1 game against a "task opponent" whose skill is the
task's difficulty, known exactly (sigma 0) and never updated; there are no
draws. For that case the factor graph collapses to the closed form below, so
this module is a few lines of arithmetic instead of a message-passing engine.
Pure: values in, values out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

MU0 = 25.0
SIGMA0 = 25.0 / 3.0
BETA = 25.0 / 6.0
TAU = 25.0 / 300.0

CAREER_TIERS: tuple[tuple[int, str], ...] = (
    (35, "legend"),
    (30, "distinguished"),
    (25, "principal"),
    (20, "staff"),
    (15, "senior"),
    (10, "mid"),
    (5, "junior"),
    (0, "intern"),
)
TIER_NAMES: tuple[str, ...] = tuple(name for _, name in reversed(CAREER_TIERS))  # intern ... legend
TIER_FLOOR: dict[str, int] = {name: floor for floor, name in CAREER_TIERS}  # the lowest level of each tier


@dataclass(frozen=True)
class Rating:
    """A Gaussian belief about skill: mean ``mu``, standard deviation ``sigma``."""

    mu: float = MU0
    sigma: float = SIGMA0

    def to_json(self) -> dict[str, float]:
        """The rating as recorded in game records and credentials."""
        return {"mu": self.mu, "sigma": self.sigma}


@dataclass(frozen=True)
class Model:
    """The model's constants; recorded in every result so a run can be replayed."""

    mu0: float = MU0
    sigma0: float = SIGMA0
    beta: float = BETA
    tau: float = TAU

    def initial(self) -> Rating:
        """The prior every run starts from, so a replay from the recorded model starts at the same point."""
        return Rating(self.mu0, self.sigma0)

    def to_json(self) -> dict[str, float]:
        """The constants as recorded in a result, for a replay."""
        return {"mu0": self.mu0, "sigma0": self.sigma0, "beta": self.beta, "tau": self.tau}


DEFAULT_MODEL = Model()


def _pdf(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _cdf(x: float) -> float:
    # erfc keeps relative precision in the far lower tail, where 1 + erf(x) would cancel.
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _v_win(t: float) -> float:
    """Additive mean correction for a win: pdf(t) / cdf(t) (-> -t far in the tail)."""
    denom = _cdf(t)
    return _pdf(t) / denom if denom > 0.0 else -t


def win_probability(skill: float, difficulty: float, beta: float = BETA) -> float:
    """P(player of skill ``skill`` beats a fixed opponent): Phi((skill - difficulty) / (sqrt2 * beta))."""
    return _cdf((skill - difficulty) / (math.sqrt(2.0) * beta))


def rate(rating: Rating, difficulty: float, won: bool, model: Model = DEFAULT_MODEL) -> Rating:
    """One game against a fixed-skill opponent (mu = difficulty, sigma = 0).

    tau is added to the player's variance first (the dynamics step), then the
    truncated-Gaussian update: c^2 = 2 beta^2 + sigma^2 (opponent variance 0).
    """
    var = rating.sigma * rating.sigma + model.tau * model.tau
    c2 = 2.0 * model.beta * model.beta + var
    c = math.sqrt(c2)
    sign = 1.0 if won else -1.0
    t = sign * (rating.mu - difficulty) / c
    v = _v_win(t)
    w = v * (v + t)
    mu = rating.mu + sign * (var / c) * v
    new_var = var * (1.0 - (var / c2) * w)
    return Rating(mu, math.sqrt(new_var))


def rate_games(games: Iterable[tuple[float, bool]], model: Model = DEFAULT_MODEL) -> Rating:
    """Rate a sequence of (difficulty, won) games from the model's initial rating."""
    r = model.initial()
    for difficulty, won in games:
        r = rate(r, difficulty, won, model)
    return r


def conservative(rating: Rating) -> float:
    """R = mu - 3 sigma: what one can claim with ~99.9% confidence, so luck cannot level you."""
    return rating.mu - 3.0 * rating.sigma


def acx_level(r: float) -> int:
    """max(0, floor(R + 0.5)): half up, unlike Python's half-even ``round``."""
    return max(0, math.floor(r + 0.5))


def career_tier(level: int) -> str:
    """The eight career tiers: intern <5, junior >=5, ... legend >=35."""
    for threshold, name in CAREER_TIERS:
        if level >= threshold:
            return name
    return "intern"


def tier_rank(name: str) -> int:
    """Position of a tier in the ladder (intern 0 ... legend 7); -1 if unknown."""
    return TIER_NAMES.index(name) if name in TIER_NAMES else -1
