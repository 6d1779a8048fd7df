"""A cosign projection layer read the way cosign's Go code reads it, to tell whether it carries a level.

Why not our strict parse: what matters is what ``cosign verify-attestation`` will accept on a mirror, and Go reads
more than a strict parser does. Its ``encoding/json`` matches an object key to a field under Unicode case folding
(the last matching key wins) and replaces invalid UTF-8 instead of refusing it; its base64 decoders skip line
breaks, and the DSSE and protojson readers also take the URL-safe alphabet and missing padding. A genuine,
verifier-signed envelope re-encoded that way (the signature covers the decoded bytes, not their encoding) was
read as "not a level" here and carried, and cosign verified it. So this reader is a superset of those: whatever Go
decodes, it decodes to the same bytes; a layer it cannot read at all is reported as unreadable, and the caller
treats that as a level that names nothing (never carried under ``--trust``), not as something else.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from acx_oci.services.artifacts import PREDICATE_LEVEL

#: How deep a projection's JSON may nest (Go's decoder allows 10000; ours is far below Python's stack).
MAX_DEPTH = 64


def _folded(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object as Go sees it through a struct: keys compared under case folding, the last one wins."""
    return {k.casefold(): v for k, v in pairs}


def _depth_ok(text: str) -> bool:
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest <= MAX_DEPTH


def go_json(raw: bytes) -> Any:
    """JSON as Go's ``encoding/json`` reads it into a struct (see :func:`_folded`); ``ValueError`` if not."""
    text = raw.decode("utf-8", "replace")
    if not _depth_ok(text):
        raise ValueError(f"nested deeper than {MAX_DEPTH}")
    try:
        return json.loads(text, object_pairs_hook=_folded)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not JSON ({type(exc).__name__})") from None


def go_b64(value: Any) -> bytes:
    """A DSSE payload decoded as Go's readers do: line breaks skipped, standard or URL-safe, padded or not."""
    if not isinstance(value, str):
        raise ValueError("the payload is not a string")
    text = value.replace("\r", "").replace("\n", "").rstrip("=")
    text += "=" * (-len(text) % 4)
    alt = b"-_" if ("-" in text or "_" in text) else None
    try:
        return base64.b64decode(text, altchars=alt, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the payload is not base64 in any alphabet Go reads") from None


def level_of(raw: bytes, bundle: bool) -> tuple[bool, str | None]:
    """``(carries a level, the credential digest it names)`` of a ``.att``/``.sig`` layer or a Sigstore bundle
    (``bundle``: its ``dsseEnvelope``, or protojson's ``dsse_envelope``). ``ValueError`` when the layer is
    not JSON or its DSSE payload cannot be decoded; a layer that is JSON but no DSSE envelope carries no level."""
    doc = go_json(raw)
    if not isinstance(doc, dict):
        return False, None
    envelope = (doc.get("dsseenvelope") or doc.get("dsse_envelope")) if bundle else doc
    if not isinstance(envelope, dict) or "payload" not in envelope:
        return False, None
    statement = go_json(go_b64(envelope["payload"]))
    if not isinstance(statement, dict) or statement.get("predicatetype") != PREDICATE_LEVEL:
        return False, None
    predicate = statement.get("predicate")
    digest = predicate.get("credentialdigest") if isinstance(predicate, dict) else None
    return True, digest if isinstance(digest, str) else None


__all__ = ["go_b64", "go_json", "level_of"]
