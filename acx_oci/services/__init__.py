"""Use cases, by role: ``artifacts`` (our artifacts on OCI both ways), ``consumer`` (resolve, copy, pull),
``verifier`` (attest, ledger, publish, revoke, the log writer), ``exams`` (exam certification),
``tools`` (demo, doctor, examples).

import-linter holds the roles apart (pyproject.toml): neither the gateway nor ``consumer`` imports
``verifier``, and ``artifacts`` imports neither.
"""
