"""Signed game records that replay, for tests that build credentials by hand.

``play(signer, rom, bench, skill)`` plays ``games`` tasks against a fixed-skill
player (wins exactly when its skill beats the task's difficulty, a few unrated
lane errors mixed in) and signs each game record the way ``attest`` does; the
returned :class:`Played` carries what a credential must then claim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acx_oci.crypto import Identity
from acx_oci.model import gamerecords
from acx_oci.model import rating as ts
from acx_oci.model.credential import evidence_item


@dataclass(frozen=True)
class Played:
    records: list[gamerecords.GameRecord]
    rating: ts.Rating
    rated: int
    passes: int

    @property
    def pass_rate(self) -> float:
        return self.passes / self.rated if self.rated else 0.0

    @property
    def level(self) -> int:
        return ts.acx_level(ts.conservative(self.rating))

    @property
    def tier(self) -> str:
        return ts.career_tier(self.level)

    @property
    def raws(self) -> list[bytes]:
        return [r.raw for r in self.records]

    def evidence(self) -> list[dict[str, Any]]:
        """``evidence[]`` as attest writes it: game 1 inline, the rest by digest."""
        first = self.records[0]
        out = [evidence_item(first.raw, game=1, inline=first.envelope)]
        return out + [evidence_item(r.raw, game=i) for i, r in enumerate(self.records[1:], 2)]

    def claims(self) -> dict[str, Any]:
        """The ``issue(...)`` keyword arguments a credential over these records must carry."""
        return {"rating_mu": self.rating.mu, "rating_sigma": self.rating.sigma, "games_played": self.rated,
                "acx_level": self.level, "career_tier": self.tier, "pass_rate": self.pass_rate}


def _games(skill: float, games: int, lane_errors: tuple[int, ...]) -> list[tuple[float, str]]:
    """(difficulty, outcome) per game: tasks spread within 10 of the player's skill, won when below it."""
    out = []
    for n in range(1, games + 1):
        difficulty = round(skill + (n * 7919 % 200) / 10.0 - 9.95, 2)
        if n in lane_errors:
            out.append((difficulty, gamerecords.LANE_ERROR))
        else:
            out.append((difficulty, gamerecords.CERTIFIED_PASS if skill > difficulty else gamerecords.MODEL_FAIL))
    return out


def _rate(games: list[tuple[float, str]]) -> ts.Rating:
    r = ts.DEFAULT_MODEL.initial()
    for difficulty, outcome in games:
        if outcome in gamerecords.RATED:
            r = ts.rate(r, difficulty, outcome == gamerecords.CERTIFIED_PASS)
    return r


def play(signer: Identity, rom_digest: str, benchmark_digest: str, skill: float, games: int = 90,
         lane_errors: tuple[int, ...] = (7,)) -> Played:
    rating = ts.DEFAULT_MODEL.initial()
    records = []
    rated = passes = 0
    for n, (difficulty, outcome) in enumerate(_games(skill, games, lane_errors), 1):
        before = rating
        if outcome in gamerecords.RATED:
            won = outcome == gamerecords.CERTIFIED_PASS
            rated += 1
            passes += won
            rating = ts.rate(rating, difficulty, won)
        pred = gamerecords.predicate(
            game=n, task_commitment="hmac-sha256:" + f"{n:064x}", difficulty=difficulty, outcome=outcome,
            rating_before=before, rating_after=rating, rom_digest=rom_digest, benchmark_digest=benchmark_digest,
            solver={"name": "reference", "version": 1})
        records.append(gamerecords.sign_game(pred, signer))
    return Played(records, rating, rated, passes)


def play_level(signer: Identity, rom_digest: str, benchmark_digest: str, level: int, games: int = 90) -> Played:
    """Records whose replay gives exactly ``level`` (searched over the player's skill, then signed once)."""
    for tenth in range(0, 800):
        skill = level + tenth / 20.0
        got = ts.acx_level(ts.conservative(_rate(_games(skill, games, (7,)))))
        if got == level:
            return play(signer, rom_digest, benchmark_digest, skill, games)
        if got > level:
            break
    raise AssertionError(f"no skill gives level {level} in {games} games")
