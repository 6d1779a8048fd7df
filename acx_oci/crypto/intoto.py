"""in-toto Statement v1: we sign the RFC 8785 bytes of our own dict and use the
``in-toto-attestation`` library only to validate the structure (its protobuf
form turns 90 into 90.0, so its bytes are never what we sign)."""

from __future__ import annotations

from typing import Any

from acx_oci.crypto.jcs import canonical
from acx_oci.errors import UsageError

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"


def statement(subjects: list[dict[str, Any]], predicate_type: str, predicate: dict[str, Any]) -> dict[str, Any]:
    """Build and validate a Statement; ``subjects`` are ``{name, digest: {sha256: hex}}``."""
    st = {"_type": STATEMENT_TYPE, "subject": subjects, "predicateType": predicate_type, "predicate": predicate}
    validate_statement(st)
    return st


def subject_for_digest(name: str, digest: str) -> dict[str, Any]:
    """An in-toto subject for an OCI digest: ``sha256:abc`` becomes ``{"sha256": "abc"}``."""
    alg, _, hexpart = digest.partition(":")
    return {"name": name, "digest": {alg: hexpart}}


def validate_statement(st: Any) -> None:
    """Check the shape with the in-toto library; raises UsageError, never returns the library's (re-typed) form."""
    from google.protobuf import json_format
    from in_toto_attestation.v1 import statement_pb2
    from in_toto_attestation.v1.statement import Statement

    if not isinstance(st, dict):
        raise UsageError("in-toto Statement: expected a JSON object")
    try:
        pb = json_format.ParseDict(st, statement_pb2.Statement())
        Statement.copy_from_pb(pb).validate()
    except (json_format.ParseError, ValueError, TypeError) as exc:
        raise UsageError(f"in-toto Statement: {exc}") from None


def statement_bytes(st: dict[str, Any]) -> bytes:
    """The bytes a DSSE envelope signs: RFC 8785 of our own dict, never the protobuf round trip."""
    return canonical(st)
