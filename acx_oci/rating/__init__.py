"""The verifier's game, pure: the engine that draws, gates and rates, a new version's acceptance rule, the harness
review's rule table and the solver protocol. The consumer's judge (:mod:`acx_oci.evaluation`) is apart: it never
plays, it reads what was played (its replay re-runs the harness review, the one import it takes from here).

This face offers the solver protocol (:class:`Solver`, :class:`SolverResult`) and ``failure_text`` (the grader's
error lines, as the harness review reads them). The engine and the acceptance rule are taken as modules
(``from acx_oci.rating import engine, accept_if``). Example::

    from acx_oci.rating import failure_text

    assert failure_text(b"E   AssertionError: expected 3") == "AssertionError: expected 3"
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.rating.harness_review import failure_text
    from acx_oci.rating.solver import Solver, SolverResult
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "harness_review": ("failure_text",),
        "solver": ("Solver", "SolverResult"),
    })

__all__ = ["Solver", "SolverResult", "failure_text"]
