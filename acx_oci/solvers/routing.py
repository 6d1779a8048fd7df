"""One solver over several: each task is played by the solver of the environment image it pins.

A suite whose exams were certified in different environment images plays each game in its own image: the
verifier prepares every image of the draw and proves containment in each (one :class:`RomSolver` per image)
before any game, then routes each task here. Every game record carries the containment proof (with its
``imageDigest``) of the solver that played it, not one proof for the whole run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from acx_oci.errors import AcxError
from acx_oci.rating import Solver, SolverResult


class RoutingSolver:
    """Routes each task to ``solvers[key(task)]``; the record's ``containment`` is that solver's own."""

    def __init__(self, solvers: Mapping[str | None, Solver], key: Callable[[dict[str, Any]], str | None]) -> None:
        if not solvers:
            raise AcxError("a routing solver needs at least one solver")
        self.solvers = dict(solvers)
        self.key = key
        self.first = next(iter(self.solvers.values()))

    def descriptor(self) -> dict[str, Any]:
        """The same ROM runtime and sandbox in every image: the first solver's descriptor names them all."""
        return self.first.descriptor()

    def record_fields(self) -> dict[str, Any]:
        """The fields every image's games share (the runtime digest); containment comes with each game."""
        return {k: v for k, v in self.first.record_fields().items() if k != "containment"}

    def solve(self, task: dict[str, Any], rom_digest: str) -> SolverResult:
        """Play ``task`` with its image's solver; a task whose image was not prepared is a harness fault."""
        solver = self.solvers.get(self.key(task))
        if solver is None:  # every drawn task's image is prepared up front: this is the harness's own fault
            raise AcxError(f"no solver prepared for the image of task {task.get('id')!r}")
        res = solver.solve(task, rom_digest)
        own = solver.record_fields()
        record = {**{k: v for k, v in own.items() if k == "containment"}, **res.facts.get("record", {})}
        return SolverResult(res.outcome, res.detail, res.transcript, {**res.facts, "record": record})
