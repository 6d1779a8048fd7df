"""DSSE v1 envelopes (pure): PAE, Ed25519 signing and verification.

The PAE lengths are byte lengths of the raw payload, not of its base64 text.
Input accepts standard and URL-safe base64; output uses standard base64.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from typing import Any

from acx_oci.crypto.keys import Identity, verify_ed25519
from acx_oci.errors import UsageError, VerificationError

PAYLOAD_TYPE_INTOTO = "application/vnd.in-toto+json"


def pae(payload_type: str, payload: bytes) -> bytes:
    """Pre-Authentication Encoding: ``DSSEv1 <len> <type> <len> <body>``."""
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def b64decode_any(value: str, what: str) -> bytes:
    """Decode standard or URL-safe base64, padded or not."""
    if not isinstance(value, str):
        raise UsageError(f"{what}: expected a base64 string")
    padded = value + "=" * (-len(value) % 4)
    try:
        if "-" in value or "_" in value:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        raise UsageError(f"{what}: invalid base64") from None


def sign_envelope(payload: bytes, payload_type: str, signer: Identity) -> dict[str, Any]:
    """Return a DSSE envelope with one Ed25519 signature; ``keyid`` is the signer's method id."""
    sig = signer.sign(pae(payload_type, payload))
    return {
        "payloadType": payload_type,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [{"keyid": signer.verification_method, "sig": base64.b64encode(sig).decode("ascii")}],
    }


def envelope_payload(envelope: Any) -> tuple[str, bytes]:
    """Return (payloadType, payload bytes) of a structurally valid envelope."""
    if not isinstance(envelope, dict):
        raise UsageError("DSSE envelope: expected a JSON object")
    ptype, payload, sigs = envelope.get("payloadType"), envelope.get("payload"), envelope.get("signatures")
    if not isinstance(ptype, str) or not isinstance(payload, str) or not isinstance(sigs, list) or not sigs:
        raise UsageError("DSSE envelope: expected payloadType, payload and a non-empty signatures array")
    return ptype, b64decode_any(payload, "DSSE payload")


def verify_envelope(envelope: Any, public_keys: Iterable[bytes]) -> tuple[str, bytes, bytes]:
    """Verify that one signature is by one of ``public_keys`` (raw Ed25519).

    Returns (payloadType, payload, the public key that verified). Raises
    VerificationError when no signature verifies. Key ids are hints only.
    """
    ptype, payload = envelope_payload(envelope)
    message = pae(ptype, payload)
    keys = list(public_keys)
    for entry in envelope["signatures"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("sig"), str):
            continue
        try:
            sig = b64decode_any(entry["sig"], "DSSE signature")
        except UsageError:
            continue
        for key in keys:
            if verify_ed25519(key, sig, message):
                return ptype, payload, key
    raise VerificationError("DSSE envelope: no signature verifies with the expected key")
