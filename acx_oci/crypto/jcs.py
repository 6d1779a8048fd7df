"""RFC 8785 JSON Canonicalization Scheme, wrapped so callers get our errors.

``rfc8785`` is pure Python and was the hot spot of ``resolve`` (a profile of 300 credentials: 0.93 s of
3.5 s in 911 canonicalizations). Most documents we canonicalize need none of JCS's subtle parts, so a fast
path hands them to the C JSON encoder, which agrees with JCS byte for byte exactly when every object key
is ASCII (Python sorts by code point, JCS by UTF-16 unit: the same for ASCII), every number is an int
within 2^53 or a float whose ``repr`` is its ES6 form (finite, not integral, 1e-4 <= |x| < 1e16: fixed
notation with the shortest round-trip digits in both), and the output encodes as UTF-8 (no lone
surrogate). Integral floats become the ints ES6 prints. Anything else goes to ``rfc8785``; the RFC's
vectors and the 20,000 ES6 number lines run through both paths in tests/core/test_jcs.py.
"""

from __future__ import annotations

import json
from typing import Any

import rfc8785

from acx_oci.errors import UsageError

_MAX_INT = 2**53 - 1
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":"),
                           check_circular=False).encode


def _slow() -> ValueError:
    """The document needs the full RFC 8785 rules (the fast path does not apply)."""
    return ValueError("outside the fast path")


def _number(x: float) -> float | int:
    """``x`` as the C encoder should print it, or ValueError where ``repr`` and ES6 may differ."""
    if x != x or x in (float("inf"), float("-inf")):
        raise _slow()
    if x.is_integer():
        if abs(x) > _MAX_INT:
            raise _slow()
        return int(x)  # ES6 prints 100.0 as 100 and -0.0 as 0
    if not 1e-4 <= abs(x) < 1e16:
        raise _slow()
    return x


def _plain(obj: Any) -> Any:
    """``obj`` with integral floats as ints; ValueError on anything the fast path cannot promise."""
    t = type(obj)
    if t is str or t is bool or obj is None:
        return obj
    if t is int:
        if -_MAX_INT <= obj <= _MAX_INT:
            return obj
        raise _slow()
    if t is float:
        return _number(obj)
    if t is dict:
        out = {}
        for k, v in obj.items():
            if type(k) is not str or not k.isascii():
                raise _slow()
            out[k] = _plain(v)
        return out
    if t is list:
        return [_plain(v) for v in obj]
    raise _slow()


def canonical(obj: Any) -> bytes:
    """Return the JCS bytes of ``obj``; numbers must be in IEEE-754 safe range."""
    try:
        return _encode(_plain(obj)).encode("utf-8")
    except (ValueError, RecursionError):  # (UnicodeEncodeError is a ValueError: a lone surrogate)
        pass
    try:
        return rfc8785.dumps(obj)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise UsageError(f"cannot canonicalize JSON (RFC 8785): {exc}") from exc
