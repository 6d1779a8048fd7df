"""Our artifacts on OCI, both ways: cartridges, benchmarks, attestations and status lists, exam
certifications, the cosign projection, and the transparency log's OCI layout and reader.

Imports neither ``consumer`` nor ``verifier`` (an import contract): both sides build on it.
"""
