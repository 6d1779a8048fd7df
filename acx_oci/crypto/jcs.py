"""RFC 8785 JSON Canonicalization Scheme, wrapped so callers get our errors."""

from __future__ import annotations

from typing import Any

import rfc8785

from acx_oci.errors import UsageError


def canonical(obj: Any) -> bytes:
    """Return the JCS bytes of ``obj``; numbers must be in IEEE-754 safe range."""
    try:
        return rfc8785.dumps(obj)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise UsageError(f"cannot canonicalize JSON (RFC 8785): {exc}") from exc
