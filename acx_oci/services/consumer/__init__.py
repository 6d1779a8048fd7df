"""The consumer's side: ``resolve`` and what it fetches (attestations, records, replays, log proofs)
and remembers (status lists, verdicts, log heads), ``copy`` (the verified mirror), ``pull``, and
the log monitor (``log_audit``).

Never imports ``verifier`` (an import contract): the gateway runs this code, not the verifier's.
"""
