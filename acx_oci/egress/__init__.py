"""Model egress: the verifier-run proxy through which a sandboxed agent reaches its model (and nothing else)."""
