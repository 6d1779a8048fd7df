"""The solver slot: the interface the engine plays every drawn task through (pure).

Outcomes follow the reference design (DESIGN.md): ``certified-pass`` and ``model-fail`` are games;
``lane-error`` (the harness or grader broke), ``withheld`` (conditions
unproven) and ``invalid`` (an invariant fired) are recorded but never rated.
Concrete solvers live in :mod:`acx_oci.solvers` (they run processes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class SolverResult:
    """One task's outcome; ``transcript`` is sealed by the caller, never published in the clear.

    ``facts["record"]``, when present, holds this game's own record fields (``containment``, ``executor``):
    on a cluster each game carries the proof and the name of the worker that played it.
    """

    outcome: str
    detail: str = ""
    transcript: bytes | None = None
    facts: dict[str, Any] = field(default_factory=dict)


class Solver(Protocol):
    """What the engine needs from anything that plays tasks: a local ROM run, a remote agent or a cluster."""
    def descriptor(self) -> dict[str, Any]:
        """What every game record names as its ``solver`` (no secrets, no task ids)."""
        ...

    def record_fields(self) -> dict[str, Any]:
        """Fields every game record of this run carries (``runtimeDigest``, ``containment``); ``{}`` if none."""
        ...

    def solve(self, task: dict[str, Any], rom_digest: str) -> SolverResult:
        """Play one task; must be safe to call from several threads at once (``--jobs``).

        A solver may also offer ``solve_all(tasks, rom_digest, jobs)``, an iterator of results in the order
        of ``tasks``: the engine then lets it place the games itself (a Dask cluster) and rates as usual.
        """
        ...
