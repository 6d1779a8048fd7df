"""W3C Bitstring Status List v1.0 (pure): revocation by flipping one bit.

``encodedList`` is ``u`` + base64url (no padding) of the GZIP'd bitstring;
index 0 is the most significant bit of byte 0. Lists shorter than 131,072
entries are refused (herd privacy), as are legacy lists without the ``u``
multibase prefix. Decompression is capped so a GZIP bomb costs bounded
memory. Indices are allocated at random so an index says nothing about issue
order.

Rollback protection (TUF's versions plus freshness): every list this project
signs carries ``credentialSubject["acx:sequence"]``, a JSON integer that the
issuer increases on every re-sign. It is inside the signed credential, so a
repository owner cannot raise it; consumers remember the highest sequence they
saw per list and refuse a lower one. A list without it (other issuers, lists
signed before sequences existed) counts as 0.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import secrets
import uuid
import zlib
from collections.abc import Callable, Container
from datetime import UTC, datetime
from typing import Any

from acx_oci.crypto import Identity, dataintegrity
from acx_oci.errors import StatusListError, UsageError

MIN_ENTRIES = 131_072
DEFAULT_MAX_BYTES = 16 * 1024 * 1024  # 134M entries: far above any real list
VC_V2_CONTEXT = "https://www.w3.org/ns/credentials/v2"
LIST_TYPE = "BitstringStatusListCredential"
ENTRY_TYPE = "BitstringStatusListEntry"
PURPOSES = ("revocation", "suspension", "refresh", "message")
SEQUENCE = "acx:sequence"  # member of credentialSubject: the list's monotonically increasing version
MAX_SEQUENCE = 2**53 - 1  # an I-JSON integer: exact in every JSON parser


def rfc3339(dt: datetime) -> str:
    """UTC, second precision, ``Z`` — the form every timestamp we write uses."""
    if dt.tzinfo is None:
        raise UsageError("timestamps must be timezone-aware")
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_list_url(base: str) -> str:
    """``base`` + a random UUID as the last path segment (DESIGN: the list is named by a UUID)."""
    return base.rstrip("/") + "/" + str(uuid.uuid4())


def empty_bits(size: int = MIN_ENTRIES) -> bytearray:
    """An all-clear list of ``size`` bits; the spec's minimum size keeps one entry from being singled out."""
    if size < MIN_ENTRIES or size % 8:
        raise StatusListError(f"a status list needs at least {MIN_ENTRIES} entries and a multiple of 8, found {size}")
    return bytearray(size // 8)


def encode_bits(bits: bytes | bytearray) -> str:
    """GZIP (level 6, mtime 0 — reproduces the spec example) then ``u`` + base64url without padding."""
    raw = gzip.compress(bytes(bits), compresslevel=6, mtime=0)
    return "u" + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_encoded_list(encoded: Any, max_bytes: int = DEFAULT_MAX_BYTES, min_entries: int = MIN_ENTRIES) -> bytes:
    """Decode ``encodedList`` to the raw bitstring, refusing legacy, short and oversized lists."""
    if not isinstance(encoded, str) or not encoded:
        raise StatusListError("status list: encodedList must be a non-empty string")
    if not encoded.startswith("u"):
        raise StatusListError("status list: encodedList lacks the multibase 'u' (base64url) prefix "
                              "(a legacy pre-v1.0 list; refused as the spec requires)")
    body = encoded[1:]
    if any(c in body for c in "+/"):
        raise StatusListError("status list: encodedList must be base64url (found '+' or '/')")
    try:
        compressed = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        raise StatusListError("status list: encodedList is not valid base64url") from None
    d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        bits = d.decompress(compressed, max_bytes + 1)
    except zlib.error as exc:
        raise StatusListError(f"status list: encodedList is not valid GZIP ({exc})") from None
    if len(bits) > max_bytes or d.unconsumed_tail:
        raise StatusListError(f"status list: decompresses to more than {max_bytes} bytes "
                              f"({max_bytes * 8} entries); refused as a possible GZIP bomb")
    if not d.eof:
        raise StatusListError("status list: encodedList is truncated GZIP")
    if len(bits) * 8 < min_entries:
        raise StatusListError(f"status list: only {len(bits) * 8} entries; at least {min_entries} are required")
    return bits


def get_bit(bits: bytes | bytearray, index: int) -> bool:
    """Bit ``index``, most significant bit first as the spec orders them; StatusListError outside the list."""
    if not 0 <= index < len(bits) * 8:
        raise StatusListError(f"status list index {index} is outside the list (0..{len(bits) * 8 - 1})")
    return bool(bits[index // 8] & (0x80 >> (index % 8)))


def set_bit(bits: bytearray, index: int, value: bool = True) -> None:
    """Set or clear bit ``index`` in place; StatusListError outside the list (checked before any change)."""
    get_bit(bits, index)
    if value:
        bits[index // 8] |= 0x80 >> (index % 8)
    else:
        bits[index // 8] &= ~(0x80 >> (index % 8)) & 0xFF


def set_indices(bits: bytes | bytearray) -> list[int]:
    """Every set index, ascending (for reports and tests)."""
    out: list[int] = []
    for i, byte in enumerate(bits):
        if byte:
            out.extend(i * 8 + j for j in range(8) if byte & (0x80 >> j))
    return out


def allocate_index(size: int, used: Container[int], randbelow: Callable[[int], int] = secrets.randbelow,
                   attempts: int = 10_000) -> int:
    """A uniformly random index not in ``used``; random so indices leak no issue order."""
    for _ in range(attempts):
        idx = randbelow(size)
        if idx not in used:
            return idx
    raise StatusListError(f"status list of {size} entries is (nearly) full; start a new list")


def parse_index(value: Any, what: str = "statusListIndex") -> int:
    """The spec says string; accept a decimal string (or an int from older issuers)."""
    if isinstance(value, bool):
        raise StatusListError(f"{what} must be a decimal string")
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    raise StatusListError(f"{what} must be a non-negative decimal string, found {str(value)[:30]!r}")


def new_status_list(*, list_url: str, issuer: str, valid_from: datetime, size: int = MIN_ENTRIES,
                    purpose: str = "revocation", valid_until: datetime | None = None,
                    bits: bytes | None = None, sequence: int | None = None) -> dict[str, Any]:
    """An unsigned ``BitstringStatusListCredential`` (VC 2.0) with all bits clear unless ``bits``.

    ``sequence`` (``acx:sequence`` in the subject) is the list's version: higher on every re-sign.
    """
    if purpose not in PURPOSES:
        raise StatusListError(f"statusPurpose must be one of {', '.join(PURPOSES)}")
    data = bytes(bits) if bits is not None else bytes(empty_bits(size))
    if len(data) * 8 < MIN_ENTRIES:
        raise StatusListError(f"a status list needs at least {MIN_ENTRIES} entries")
    doc: dict[str, Any] = {
        "@context": [VC_V2_CONTEXT],
        "id": list_url,
        "type": ["VerifiableCredential", LIST_TYPE],
        "issuer": issuer,
        "validFrom": rfc3339(valid_from),
    }
    if valid_until is not None:
        doc["validUntil"] = rfc3339(valid_until)
    doc["credentialSubject"] = {
        "id": f"{list_url}#list",
        "type": "BitstringStatusList",
        "statusPurpose": purpose,
        "encodedList": encode_bits(data),
    }
    if sequence is not None:
        doc["credentialSubject"][SEQUENCE] = _check_sequence(sequence)
    return doc


def _check_sequence(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEQUENCE:
        raise StatusListError(f"status list: {SEQUENCE} must be an integer from 0 to {MAX_SEQUENCE}, "
                              f"found {str(value)[:30]!r}")
    return value


def list_sequence(credential: Any) -> int:
    """The list's ``acx:sequence``; 0 when absent (lists from before sequences, or from other issuers)."""
    subject = list_subject(credential)
    return _check_sequence(subject[SEQUENCE]) if SEQUENCE in subject else 0


def list_subject(credential: Any) -> dict[str, Any]:
    """The ``BitstringStatusList`` subject of a list credential, structurally checked."""
    if not isinstance(credential, dict):
        raise StatusListError("status list credential: expected a JSON object")
    types = credential.get("type")
    if not isinstance(types, list) or LIST_TYPE not in types or "VerifiableCredential" not in types:
        raise StatusListError(f"status list credential: type must include VerifiableCredential and {LIST_TYPE}")
    subject = credential.get("credentialSubject")
    if not isinstance(subject, dict) or subject.get("type") != "BitstringStatusList":
        raise StatusListError("status list credential: credentialSubject must be a BitstringStatusList")
    return subject


def list_bits(credential: Any, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The decoded bitstring of a status list credential, bounded by ``max_bytes`` decompressed."""
    return decode_encoded_list(list_subject(credential).get("encodedList"), max_bytes)


def list_purposes(credential: Any) -> list[str]:
    """The purposes a list serves (``revocation``, ``suspension``): a single string or an array in the credential."""
    purpose = list_subject(credential).get("statusPurpose")
    return [purpose] if isinstance(purpose, str) else [p for p in _list(purpose) if isinstance(p, str)]


def _list(value: Any) -> list[Any]:
    """A member that must be an array, as one (anything else counts as absent)."""
    return value if isinstance(value, list) else []


def with_bit(status_list: dict[str, Any], index: int, value: bool = True,
             valid_from: datetime | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, Any]:
    """A copy with bit ``index`` set (revoke), its sequence one higher and the old proof removed, ready to re-sign.

    ``valid_from`` (pass ``now``) refreshes the list's freshness, which
    verifiers compare against their maximum status age.
    """
    bits = bytearray(list_bits(status_list, max_bytes))
    set_bit(bits, index, value)
    sequence = list_sequence(status_list) + 1
    out = dataintegrity.without_proof(status_list)
    out["credentialSubject"] = {**out["credentialSubject"], "encodedList": encode_bits(bits),
                                SEQUENCE: _check_sequence(sequence)}
    if valid_from is not None:
        out["validFrom"] = rfc3339(valid_from)
    return out


def sign_status_list(status_list: dict[str, Any], signer: Identity, verification_method: str,
                     created: datetime | str) -> dict[str, Any]:
    """Secure a list credential with eddsa-jcs-2022 (proof array, like our level credentials)."""
    when = created if isinstance(created, str) else rfc3339(created)
    return dataintegrity.sign(dataintegrity.without_proof(status_list), signer, verification_method, when,
                              as_array=True)


def status_entry(list_url: str, index: int, purpose: str = "revocation") -> dict[str, Any]:
    """A ``BitstringStatusListEntry`` for a credential; ``statusListIndex`` is a string."""
    return {
        "id": f"{list_url}#{index}",
        "type": ENTRY_TYPE,
        "statusPurpose": purpose,
        "statusListIndex": str(index),
        "statusListCredential": list_url,
    }
