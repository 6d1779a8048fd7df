"""Log entries: JSON objects checked against ``log-entry.schema.json``, stored as RFC 8785 bytes.

Canonical bytes make a leaf hash a function of the entry's content, so anyone holding a
credential can rebuild the entry and find it in the log; the schema keeps a leaf to the three
kinds the issue names (an attempt, a status-list publication, a key rotation). An attempt's optional
``publisher`` (the did:key its record signs as the ROM's publisher; entries from before it lack it) lets
``state rebuild`` keep publisher-scoped cooldowns and counts after the publisher deleted its records.
"""

from __future__ import annotations

from typing import Any

from acx_oci.crypto import canonical
from acx_oci.errors import UsageError
from acx_oci.jsonio import parse_json, validate
from acx_oci.tlog import MAX_ENTRY

SCHEMA = "log-entry.schema.json"
SCHEMA_VERSION = "acx.log-entry/1"
KINDS = ("attempt", "status-list", "key-rotation")


def entry_bytes(entry: dict[str, Any]) -> bytes:
    """The leaf bytes of ``entry`` (schemaVersion added when missing): schema-checked JCS, at most 65,535 bytes."""
    doc = {"schemaVersion": SCHEMA_VERSION, **entry}
    validate(doc, SCHEMA, f"log entry ({doc.get('kind', 'no kind')})")
    data = canonical(doc)
    if len(data) > MAX_ENTRY:
        raise UsageError(f"a log entry of {len(data)} bytes (a tile bundle holds at most {MAX_ENTRY})")
    return data


def parse_entry(data: bytes, index: int) -> dict[str, Any]:
    """An entry read back from the log: JSON, in canonical form, and of the schema (else UsageError)."""
    doc = parse_json(data, f"log entry {index}")
    if not isinstance(doc, dict):
        raise UsageError(f"log entry {index}: not a JSON object")
    if canonical(doc) != data:
        raise UsageError(f"log entry {index}: not in canonical (RFC 8785) form")
    validate(doc, SCHEMA, f"log entry {index}")
    return doc
