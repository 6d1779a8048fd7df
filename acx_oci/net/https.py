"""The one HTTPS fetcher for DID documents, status lists and anything else fetched by URL.

Every fetch outside a registry goes through :func:`fetch`, so all of them have
the same bounds: a connect timeout, a wall-clock deadline for the whole body
(a server that trickles one byte a second is cut off, not waited on), a byte
cap read without buffering more than the cap, no redirects (a redirect could
move a did:web lookup to another host), and only ``https://`` unless the
caller names a loopback base for tests.
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Callable

import requests

from acx_oci.errors import NotFoundError, RegistryError, UsageError

CONNECT_TIMEOUT = 3.0
DEFAULT_DEADLINE = 10.0
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")

Fetch = Callable[[str], bytes]


def allowed(url: str) -> bool:
    """HTTPS anywhere, plain HTTP only to loopback (tests and local mirrors)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and (parts.hostname or "") in _LOOPBACK


def fetch(url: str, *, max_bytes: int, accept: str = "application/json",
          deadline: float = DEFAULT_DEADLINE) -> bytes:
    """GET ``url`` and return at most ``max_bytes`` bytes, or raise.

    Raises :class:`NotFoundError` on 404/410, :class:`RegistryError` on any
    other failure (network, status, deadline) and :class:`UsageError` when the
    body is larger than ``max_bytes`` or the URL is neither HTTPS nor loopback.
    """
    if not allowed(url):
        raise UsageError(f"{url[:120]}: expected an https:// URL (plain http only on loopback)")
    start = time.monotonic()
    try:
        with requests.get(url, timeout=(CONNECT_TIMEOUT, deadline), stream=True, allow_redirects=False,
                          headers={"Accept": accept}) as resp:
            if resp.status_code in (404, 410):
                raise NotFoundError(f"GET {url}: HTTP {resp.status_code}")
            if resp.status_code != 200:
                raise RegistryError(f"GET {url}: HTTP {resp.status_code}")
            body = bytearray()
            for chunk in resp.iter_content(65536):
                body += chunk
                if len(body) > max_bytes:
                    raise UsageError(f"GET {url}: larger than {max_bytes} bytes")
                if time.monotonic() - start > deadline:
                    raise RegistryError(f"GET {url}: body not received within {deadline:g} s")
    except requests.RequestException as exc:
        raise RegistryError(f"GET {url}: {type(exc).__name__}") from None
    return bytes(body)


def fetcher(*, max_bytes: int, accept: str = "application/json", deadline: float = DEFAULT_DEADLINE) -> Fetch:
    """A :data:`Fetch` with fixed bounds, to inject into pure code that only knows ``url -> bytes``."""
    return lambda url: fetch(url, max_bytes=max_bytes, accept=accept, deadline=deadline)
