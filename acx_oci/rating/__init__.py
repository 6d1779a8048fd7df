"""The verifier's game, pure: the engine that draws, gates and rates, a new version's acceptance rule, the harness
review's rule table and the solver protocol. The consumer's judge (:mod:`acx_oci.evaluation`) is apart: it never
plays, it reads what was played (its replay re-runs the harness review, the one import it takes from here)."""
