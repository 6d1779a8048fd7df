"""HTTP transport for one registry: a keep-alive ``requests.Session``, explicit timeouts,
bounded retries, bounded reads, and the mapping of failures to ``RegistryError``.

Failures are classified by exception type and HTTP status, never by message text.
"""

from __future__ import annotations

import errno
import ipaddress
import random
import socket
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import NameResolutionError, NewConnectionError

from acx_oci.errors import AcxError, NotFoundError, RegistryError
from acx_oci.jsonio import loads
from acx_oci.oci.registry.auth import RegistryAuth, docker_config_path
from acx_oci.oci.store import StoreOptions

CHUNK = 1024 * 1024
POOL_SIZE = 32
ERROR_BODY_CAP = 64 * 1024
RETRY_STATUS = frozenset({500, 502, 503, 504})

Body = bytes | Callable[[], IO[bytes]] | None


def _host_only(host: str) -> str:
    """Strip the port (and IPv6 brackets) from ``HOST[:PORT]``."""
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:
        return host.rsplit(":", 1)[0]
    return host


def is_loopback(host: str) -> bool:
    """True for localhost, 127.0.0.0/8 and ::1 (those get plain HTTP automatically)."""
    name = _host_only(host).lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it wraps: args, urllib3's ``reason``, ``__cause__`` / ``__context__`` (bounded walk)."""
    todo: list[BaseException] = [exc]
    seen: set[int] = set()
    while todo and len(seen) < 32:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [a for a in (*e.args, getattr(e, "reason", None), e.__cause__, e.__context__)
                 if isinstance(a, BaseException)]


def connect_reason(exc: BaseException) -> str | None:
    """Why a connection could not be opened (by exception type), or None if it broke after opening."""
    causes = list(_causes(exc))
    for e in causes:
        if isinstance(e, ConnectionRefusedError):
            return "connection refused"
        if isinstance(e, NameResolutionError | socket.gaierror):
            return "cannot resolve host"
        if isinstance(e, OSError) and e.errno == errno.ENETUNREACH:
            return "network unreachable"
        if isinstance(e, OSError) and e.errno == errno.EHOSTUNREACH:
            return "no route to host"
    if any(isinstance(e, NewConnectionError) for e in causes):
        return "cannot connect"
    return None


class Transport:
    """Requests to one registry host with auth, timeouts and bounded retries."""

    def __init__(self, host: str, options: StoreOptions, auth: RegistryAuth) -> None:
        self.host = host
        self.options = options
        self.auth = auth
        self.timeout = (min(options.timeout, 3.0), options.timeout)
        self.session = requests.Session()
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=POOL_SIZE, max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.verify = not options.insecure
        self.session.headers["User-Agent"] = "acx-oci"

    def close(self) -> None:
        self.session.close()

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
        body: Body = None,
        stream: bool = True,
    ) -> requests.Response:
        """Send with auth, explicit timeouts and bounded retries; map failures to RegistryError.

        Connection failures are not retried (an unreachable registry is reported
        within the connect timeout); 5xx and connections reset mid-request are,
        ``options.retries`` times with short jittered backoff.
        """
        attempts_left = max(0, self.options.retries)
        authed = False
        attempt = 0
        while True:
            hdrs = dict(headers or {})
            sent = self.auth.header
            if sent and "Authorization" not in hdrs:
                hdrs["Authorization"] = sent
            handle: IO[bytes] | None = None
            data: Any = body
            if callable(body):
                handle = body()
                data = handle
            try:
                resp = self.session.request(
                    method, url, headers=hdrs, params=params, data=data, stream=stream,
                    timeout=self.timeout, allow_redirects=True,
                )
            except requests.exceptions.ConnectTimeout:
                raise RegistryError(
                    f"registry {self.host} unreachable: connect timed out after {self.timeout[0]:g}s"
                ) from None
            except requests.exceptions.SSLError as exc:
                raise RegistryError(
                    f"registry {self.host}: TLS error ({one_line(str(exc.__class__.__name__))}); "
                    "use --insecure to skip verification or --plain-http for HTTP"
                ) from None
            except requests.exceptions.ReadTimeout:
                raise RegistryError(
                    f"registry {self.host}: no response within {self.timeout[1]:g}s ({method} {self.path(url)})"
                ) from None
            except requests.exceptions.ConnectionError as exc:
                reason = connect_reason(exc)
                if reason is not None:
                    raise RegistryError(f"registry {self.host} unreachable: {reason}") from None
                if attempt < attempts_left:
                    attempt += 1
                    self.backoff(attempt)
                    continue
                raise RegistryError(
                    f"registry {self.host}: connection lost during {method} {self.path(url)}"
                ) from None
            except requests.exceptions.RequestException as exc:
                raise RegistryError(f"registry {self.host}: {exc.__class__.__name__} during {method}") from None
            finally:
                if handle is not None:
                    handle.close()
            if resp.status_code == 401 and not authed:
                authed = True
                challenge = resp.headers.get("WWW-Authenticate", "")
                resp.close()
                self.auth.answer(challenge, sent, self.session, self.timeout)
                continue
            if resp.status_code in RETRY_STATUS and attempt < attempts_left:
                resp.close()
                attempt += 1
                self.backoff(attempt)
                continue
            return resp

    @staticmethod
    def backoff(attempt: int) -> None:
        time.sleep(min(2.0, 0.1 * 2**attempt) * random.uniform(0.5, 1.0))

    @staticmethod
    def path(url: str) -> str:
        return url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0][:120]

    def failure(self, resp: requests.Response, what: str) -> tuple[AcxError, str]:
        """(one-line error, the registry's error code or "") for a non-success response."""
        try:
            body = self.read_capped(resp, ERROR_BODY_CAP, what, truncate=True)
        except AcxError:
            body = b""
        detail = ""
        code = ""
        try:
            doc = loads(body, "error body", ijson=False)
            errs = doc.get("errors") if isinstance(doc, dict) else None
            if isinstance(errs, list) and errs and isinstance(errs[0], dict):
                code = str(errs[0].get("code", ""))
                detail = " ".join(str(errs[0].get(k, "")) for k in ("code", "message")).strip()
        except ValueError:
            detail = one_line(body.decode("utf-8", "replace"), 120)
        msg = f"registry {self.host}: {what}: HTTP {resp.status_code}" + (f" {one_line(detail)}" if detail else "")
        if resp.status_code == 404:
            return NotFoundError(msg), code
        if resp.status_code in (401, 403):
            hint = "" if self.auth.has_credentials else f" (no credentials for {self.host} in {docker_config_path()})"
            return RegistryError(msg + hint), code
        return RegistryError(msg), code

    def fail(self, resp: requests.Response, what: str) -> AcxError:
        """One-line error from a non-success response, with the registry's code and message."""
        return self.failure(resp, what)[0]

    def read_capped(self, resp: requests.Response, cap: int, what: str, truncate: bool = False) -> bytes:
        """Read a body, refusing (or truncating) past ``cap`` bytes; Content-Length is not trusted."""
        buf = bytearray()
        try:
            for chunk in resp.iter_content(65536):
                buf += chunk
                if len(buf) > cap:
                    if truncate:
                        return bytes(buf[:cap])
                    raise RegistryError(f"registry {self.host}: {what}: response exceeds the {cap}-byte limit")
        except requests.exceptions.RequestException as exc:
            raise RegistryError(f"registry {self.host}: {what}: connection failed while reading "
                                f"({exc.__class__.__name__})") from None
        finally:
            resp.close()
        return bytes(buf)

    def chunks(self, resp: requests.Response, what: str) -> Iterator[bytes]:
        try:
            yield from resp.iter_content(CHUNK)
        except requests.exceptions.RequestException as exc:
            raise RegistryError(f"registry {self.host}: {what}: connection failed while reading "
                                f"({exc.__class__.__name__})") from None
