"""Tools around the use cases: the demo, ``doctor`` (what this machine can run), the shipped examples, and
``runs`` (report cells from attest runs: it reads registries through the consumer, so it is not the exams wing's).
"""
