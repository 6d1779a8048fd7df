"""The reference solver: the deterministic stand-in of the reference design (DESIGN.md).

Pass iff a uniform number drawn from sha256(romDigest, taskId, competence) is
below the TrueSkill win probability, so an agent of competence c rates near c.
It simulates the protocol; credentials it earns say ``solver.name: reference``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

from acx_oci.crypto import canonical
from acx_oci.errors import UsageError
from acx_oci.model import CERTIFIED_PASS, MODEL_FAIL
from acx_oci.model import rating as ts
from acx_oci.rating import SolverResult


def reference_uniform(rom_digest: str, task_id: str, competence: float) -> float:
    """A uniform number in [0, 1) from sha256 of JCS([tag, romDigest, taskId, competence]) (53 bits)."""
    h = hashlib.sha256(canonical(["acx-reference-solver/v1", rom_digest, task_id, competence])).digest()
    return (int.from_bytes(h[:8], "big") >> 11) / float(1 << 53)


@dataclass(frozen=True)
class ReferenceSolver:
    """Deterministic per (ROM, task, competence): a level cannot be transplanted onto another ROM."""

    competence: float
    beta: float = ts.BETA

    def __post_init__(self) -> None:
        if not math.isfinite(self.competence):
            raise UsageError("reference solver: competence must be a finite number")

    def descriptor(self) -> dict[str, Any]:
        """The descriptor every game record names: ``reference`` and its competence."""
        c: float | int = int(self.competence) if float(self.competence).is_integer() else self.competence
        return {"name": "reference", "version": 1, "competence": c}

    def record_fields(self) -> dict[str, Any]:
        """Nothing extra: a simulated game has no runtime or containment to record."""
        return {}

    def solve(self, task: dict[str, Any], rom_digest: str) -> SolverResult:
        """A deterministic win or loss drawn from (ROM, task, competence); an impossible exam is always lost."""
        if task.get("impossible"):
            return SolverResult(MODEL_FAIL, "an impossible exam (the reference solver never games a grader)")
        u = reference_uniform(rom_digest, str(task["id"]), self.competence)
        p = ts.win_probability(self.competence, float(task["difficulty"]), self.beta)
        return SolverResult(CERTIFIED_PASS if u < p else MODEL_FAIL)
