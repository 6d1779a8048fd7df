"""The verifier's side: the attest pipeline (``attest`` and its steps ``request``, ``check``, ``plan``,
``play``, ``outcome``, ``issue``, ``log``), the ledger, publish, revoke, transcripts, the models
file, exposures, environment images, regression, executors, and the transparency log writer
(``log_tree`` on disk, ``log_publish`` to a registry).
"""
