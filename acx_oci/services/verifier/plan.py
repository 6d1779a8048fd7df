"""Step two of ``attest``: plan the draw, which held-out exams may be played and how many games.

Only exams published after the model's training cutoff are drawn (for an agent that calls a model, the
verifier's models-file cutoff; else the ROM's): an exam the model may have seen in training measures memory,
not skill. Undated exams are still drawn, but never count as post-cutoff: the credential's ``acx:postCutoff``
counts only rated games on exams dated after the cutoff, and a consumer may require a share of them. A bad
``--games`` is a usage error here, before any cooldown starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from acx_oci.model import RATED, training_cutoff
from acx_oci.model import benchmark as bmodel
from acx_oci.rating import engine
from acx_oci.services.artifacts import benchmark as bm
from acx_oci.services.verifier import regression as regr
from acx_oci.services.verifier.check import Checked, Loaded
from acx_oci.services.verifier.request import GateOptions


@dataclass(frozen=True)
class Plan:
    """The exams the draw takes from, the engine's parameters, and how many games that makes."""

    unsealed: bm.Unsealed
    eligible: tuple[dict[str, Any], ...]  # held-out exams published after the cutoff
    params: engine.Params
    cutoff: date | None
    cutoff_source: str | None  # "models-file", "rom", or None (no cutoff known)
    qualifying: int  # of ``eligible``, the ones that can be rated
    total: int  # games to play (0: nothing eligible)
    baseline: regr.Baseline | None = None
    exam_cert: dict[str, Any] = field(default_factory=dict)  # the credential's acx:examCertification fields


def plan_draw(gate: GateOptions, loaded: Loaded, checked: Checked) -> Plan:
    """The post-cutoff slice and the number of games, checked against it."""
    unsealed = checked.unsealed
    assert unsealed is not None  # planned only once the slice is unsealed
    params = engine.Params(games=gate.games, sigma_max=gate.sigma_max, min_games=gate.min_games)
    cutoff, source = cutoff_of(loaded)
    eligible = bmodel.post_cutoff(list(unsealed.held_out), cutoff)
    total = params.resolve_games(len(eligible)) if eligible else 0
    return Plan(unsealed, tuple(eligible), params, cutoff, source, bmodel.rateable(eligible), total,
                checked.baseline, checked.exam_cert)


def cutoff_of(loaded: Loaded) -> tuple[date | None, str | None]:
    """The training cutoff and where it came from: for an agent that calls a model, the verifier's models file
    (the ROM's own claim is ignored: an author could date it early); else the ROM's."""
    entry = loaded.model_entry
    if entry is not None:
        return entry.training_cutoff, "models-file" if entry.training_cutoff is not None else None
    rom = training_cutoff(loaded.cart.rom)
    return rom, "rom" if rom is not None else None


def post_cutoff_claim(plan: Plan, result: engine.Result) -> dict[str, Any]:
    """``acx:postCutoff``: of the rated games, how many were on exams dated strictly after the cutoff."""
    by_id = {str(t["id"]): t for t in plan.eligible}
    rated = [by_id[g.task_id] for g in result.games
             if g.outcome in RATED and g.task_id in by_id and not by_id[g.task_id].get("impossible")]
    qualifying = sum(bmodel.dated_after(t, plan.cutoff) for t in rated)
    return {"cutoff": plan.cutoff.isoformat() if plan.cutoff else None, "source": plan.cutoff_source,
            "qualifying": qualifying, "drawn": len(rated)}


def shortfall(plan: Plan, min_games: int) -> str | None:
    """NOT ISSUED before any game when too few post-cutoff exams are left to reach the gate."""
    if plan.qualifying >= min_games:
        return None
    if plan.cutoff is None:  # nothing was left out for a cutoff: the slice itself is too small for the gate
        return (f"insufficient_post_cutoff_exams: the held-out slice has {plan.qualifying} exams (no training "
                f"cutoff: every one may be drawn); the gate needs at least {min_games}")
    return (f"insufficient_post_cutoff_exams: {plan.qualifying} held-out exams were published after the "
            f"training cutoff {plan.cutoff} ({plan.cutoff_source}); the gate needs at least {min_games}")
