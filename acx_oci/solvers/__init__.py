"""Concrete solvers: the reference stand-in and the ones that run an agent (the edge: processes, files)."""
