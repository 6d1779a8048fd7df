"""OCI digests over exact bytes (never over re-serialized JSON)."""

from __future__ import annotations

import hashlib
import re

from acx_oci.errors import IntegrityError, UsageError

_DIGEST_RE = re.compile(r"^sha256:[a-f0-9]{64}\Z")


def sha256_digest(data: bytes) -> str:
    """Return ``sha256:<hex>`` of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha256_hex(data: bytes) -> str:
    """Lower-case hex SHA-256 of exact bytes, without the ``sha256:`` prefix."""
    return hashlib.sha256(data).hexdigest()


class StreamDigest:
    """The sha256 and byte count of a stream fed in pieces, so a large blob is never held whole to name it."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.size = 0

    def update(self, chunk: bytes) -> None:
        """Count and hash the next piece."""
        self._hash.update(chunk)
        self.size += len(chunk)

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of everything fed so far."""
        return "sha256:" + self._hash.hexdigest()


def is_digest(value: str) -> bool:
    """Only ``sha256:`` and 64 lower-case hex passes: check before a digest names a path or a URL."""
    return bool(_DIGEST_RE.match(value))


def check_digest(value: str, what: str = "digest") -> str:
    """Validate the syntax of a sha256 digest string (the only algorithm we accept)."""
    if not isinstance(value, str) or not _DIGEST_RE.match(value):
        raise UsageError(f"{what}: expected sha256:<64 hex>, found {value!r:.80}")
    return value


def verify_bytes(data: bytes, expected: str, what: str = "content") -> bytes:
    """Return ``data`` if its digest is ``expected``; raise IntegrityError otherwise."""
    actual = sha256_digest(data)
    if actual != expected:
        raise IntegrityError(f"{what}: digest mismatch, expected {expected}, found {actual}")
    return data
