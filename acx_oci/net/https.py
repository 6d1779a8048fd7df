"""The one HTTPS fetcher for DID documents, status lists and anything else fetched by URL.

Every fetch outside a registry goes through :func:`fetch`, so all of them have
the same bounds: a connect timeout, a wall-clock deadline for the whole
exchange, headers included (a server that trickles one byte a second is cut
off by :mod:`acx_oci.net.guard`, not waited on; the operation's ambient
deadline when it is earlier), a byte
cap read without buffering more than the cap, no redirects (a redirect could
move a did:web lookup to another host), and only ``https://`` unless the
caller names a loopback base for tests.
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Callable

import requests

from acx_oci.errors import DeadlineExceeded, NotFoundError, RegistryError, UsageError
from acx_oci.net.guard import GuardedAdapter, arm
from acx_oci.net.session import PlainSession
from acx_oci.timeutil import current_deadline

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
    status, _, body = request("GET", url, max_bytes=max_bytes, accept=accept, deadline=deadline, read=(200,))
    if status in (404, 410):
        raise NotFoundError(f"GET {url}: HTTP {status}")
    if status != 200:
        raise RegistryError(f"GET {url}: HTTP {status}")
    return body


def request(method: str, url: str, *, max_bytes: int, body: bytes | None = None,
            content_type: str | None = None, accept: str = "application/json",
            deadline: float = DEFAULT_DEADLINE, read: tuple[int, ...] | None = None) -> tuple[int, str, bytes]:
    """One bounded exchange with the same bounds as :func:`fetch`; (status, content type, body) for any status.

    For protocols whose non-200 answers carry meaning (a tlog-witness's 409 names its tree
    size), so the caller reads the status; a body over ``max_bytes`` is still refused. With
    ``read``, only answers of those statuses have their body read (the others come back empty).
    """
    if not allowed(url):
        raise UsageError(f"{url[:120]}: expected an https:// URL (plain http only on loopback)")
    ambient = current_deadline()
    if ambient is not None and ambient.expired():
        raise DeadlineExceeded(f"{method} {url}: {ambient.describe()} passed first")
    until = time.monotonic() + deadline if ambient is None else min(time.monotonic() + deadline, ambient.at)
    left = max(0.01, until - time.monotonic())
    guard = arm(until)
    session = PlainSession()
    session.mount("http://", GuardedAdapter(max_retries=0))
    session.mount("https://", GuardedAdapter(max_retries=0))
    headers = {"Accept": accept} if content_type is None else {"Accept": accept, "Content-Type": content_type}
    try:
        with guard:
            resp = session.request(method, url, data=body, timeout=(min(CONNECT_TIMEOUT, left), left), stream=True,
                                   allow_redirects=False, headers=headers)
        with resp:
            out = bytearray()
            for chunk in resp.iter_content(65536) if read is None or resp.status_code in read else ():
                out += chunk
                if len(out) > max_bytes:
                    raise UsageError(f"{method} {url}: larger than {max_bytes} bytes")
            status, ctype = resp.status_code, resp.headers.get("Content-Type", "")
    except requests.RequestException as exc:
        if guard.fired and ambient is not None and ambient.at <= until:
            raise DeadlineExceeded(f"{method} {url}: {ambient.describe()} passed") from None
        if guard.fired:
            raise RegistryError(f"{method} {url}: not received within {deadline:g} s") from None
        raise RegistryError(f"{method} {url}: {type(exc).__name__}") from None
    finally:
        guard.release()
        session.close()
    return status, ctype, bytes(out)


def fetcher(*, max_bytes: int, accept: str = "application/json", deadline: float = DEFAULT_DEADLINE) -> Fetch:
    """A :data:`Fetch` with fixed bounds, to inject into pure code that only knows ``url -> bytes``."""
    return lambda url: fetch(url, max_bytes=max_bytes, accept=accept, deadline=deadline)
