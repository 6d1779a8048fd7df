"""HTTP transport for one registry: a keep-alive ``requests.Session``, explicit timeouts,
bounded retries, bounded reads, a wall-clock bound on every request (``acx_oci.net.guard``),
and the mapping of failures to ``RegistryError``.

Failures are classified by exception type and HTTP status, never by message text.
"""

from __future__ import annotations

import errno
import ipaddress
import random
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

import requests
import urllib3
from requests.adapters import BaseAdapter
from urllib3.exceptions import InsecureRequestWarning, NameResolutionError, NewConnectionError

from acx_oci.errors import AcxError, ConnectionLost, DeadlineExceeded, GatewayDenied, NotFoundError, RegistryError
from acx_oci.jsonio import loads
from acx_oci.net import Guard, GuardedAdapter, PlainSession, arm, ca_for, speaks_tls, split_host_port, verify_setting
from acx_oci.oci.registry.auth import RegistryAuth, docker_config_path
from acx_oci.oci.store import StoreOptions
from acx_oci.timeutil import WORK_PER_MIB, Deadline, current_deadline

CHUNK = 1024 * 1024
MIB = 1024 * 1024
POOL_SIZE = 32
ERROR_BODY_CAP = 64 * 1024
RETRY_STATUS = frozenset({500, 502, 503, 504})
CUT_GRACE = 0.05  # seconds the guard waits past a request's end before cutting it
MIN_RATE = 1024 * 1024  # bytes/s a blob transfer may average before its request is cut (slow retrieval)
# the header an acx-oci gateway sets on its own policy denials (acx_oci.gateway.proxy.DENIED_HEADER)
GATEWAY_DENIED_HEADER = "acx-gateway-denied"

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


def wants_tls(host: str, options: StoreOptions) -> bool:
    """A loopback registry is spoken to over HTTPS when the user said so: a CA file, ``--insecure``, or a docker
    ``certs.d`` entry for the host (otherwise loopback stays plain HTTP, as docker treats it)."""
    return options.insecure or ca_for(host, options.ca_file) is not None


def one_line(text: str, limit: int = 200) -> str:
    """Whitespace collapsed and cut to ``limit``: a server's text in our one-line errors."""
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


def tls_reason(exc: BaseException) -> str:
    """Why a TLS handshake failed, from the ``ssl`` exception inside (its verify message or its reason)."""
    for e in _causes(exc):
        if isinstance(e, ssl.SSLCertVerificationError) and e.verify_message:
            return f"certificate verify failed: {one_line(e.verify_message, 120)}"
        if isinstance(e, ssl.SSLError) and e.reason:
            return one_line(str(e.reason), 120)
    return exc.__class__.__name__


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


def default_adapter() -> BaseAdapter:
    """The HTTP transport a registry store uses unless given one: pooled, no urllib3 retries (ours are
    bounded in :meth:`Transport.request`), sockets registered with the request's :class:`~acx_oci.net.guard.Guard`."""
    return GuardedAdapter(pool_connections=4, pool_maxsize=POOL_SIZE, max_retries=0)


class Transport:
    """Requests to one registry host with auth, timeouts and bounded retries.

    ``adapter`` is the HTTP transport mounted for both schemes (default :func:`default_adapter`);
    an injected one that does not wrap the default loses the wall-clock cut of :mod:`acx_oci.net.guard`.
    """

    def __init__(self, host: str, options: StoreOptions, auth: RegistryAuth, *,
                 adapter: BaseAdapter | None = None) -> None:
        self.host = host
        self.options = options
        self.auth = auth
        self.timeout = (min(options.timeout, 3.0), options.timeout)
        self.session = PlainSession()
        adapter = adapter if adapter is not None else default_adapter()
        self._guards: dict[int, tuple[Guard, Deadline | None, float, float]] = {}  # guard, deadline, limit, end
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        # pinned, so --insecure (or --ca-file) wins over REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE, token requests included
        self.session.pinned_verify = verify_setting(host, insecure=options.insecure, ca_file=options.ca_file)
        if options.insecure:  # asked for by name: urllib3's per-request warning would only repeat it
            urllib3.disable_warnings(InsecureRequestWarning)
        self.session.headers["User-Agent"] = "acx-oci"

    def close(self) -> None:
        """Close the session, which closes its adapter's pools."""
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
        size: int = 0,
        retry: bool = True,
        answer_challenge: bool = True,
    ) -> requests.Response:
        """Send with auth, explicit timeouts and bounded retries; map failures to RegistryError.

        ``answer_challenge=False`` returns a 401 as it came (``doctor`` reads its challenge).

        Each attempt, body included, must finish within ``options.timeout`` (plus
        ``size`` bytes at :data:`MIN_RATE` for blob transfers) and before the
        operation's ambient :class:`~acx_oci.timeutil.Deadline`: a guard cuts its
        sockets then, however slowly the server trickles. The returned response
        keeps its guard until it is closed (``read_capped``/``chunks`` close it).
        Connection failures are not retried (an unreachable registry is reported
        within the connect timeout); 5xx and connections reset mid-request are,
        ``options.retries`` times with short jittered backoff, while time remains
        (``retry=False``: not at all, for callers that must restart a sequence).
        """
        attempts_left = max(0, self.options.retries) if retry else 0
        ambient = current_deadline()
        if body is not None and size and ambient is not None:  # an upload of ours is work, once however retried
            ambient.allow("MiB", size / MIB, WORK_PER_MIB)
        authed = False
        attempt = 0
        while True:
            hdrs = dict(headers or {})
            sent = self.auth.header
            if sent and "Authorization" not in hdrs:
                hdrs["Authorization"] = sent
            what = f"{method} {self.path(url)}"
            limit = self.options.timeout + size / MIN_RATE
            own_end = time.monotonic() + limit
            deadline = current_deadline()
            timeout, guard = self._arm(what, limit, deadline)
            handle: IO[bytes] | None = body() if callable(body) else None
            data: Any = handle if handle is not None else body
            try:
                with guard:
                    resp = self.session.request(
                        method, url, headers=hdrs, params=params, data=data, stream=stream,
                        timeout=timeout, allow_redirects=True,
                    )
                    if resp.status_code == 401 and not authed and answer_challenge:
                        authed = True
                        challenge = resp.headers.get("WWW-Authenticate", "")
                        resp.close()
                        self.auth.answer(challenge, sent, self.session, timeout)
                        guard.release()
                        continue
            except BaseException as exc:
                guard.release()
                if not isinstance(exc, requests.exceptions.RequestException):
                    raise
                error = self._request_error(exc, guard, deadline, what, limit, timeout)
                if error is None:  # the connection broke after opening: retried like a 5xx
                    if attempt < attempts_left and self.backoff(attempt + 1, deadline):
                        attempt += 1
                        continue
                    error = self._tls_listener(url) or ConnectionLost(
                        f"registry {self.host}: connection lost during {what}")
                raise error from None
            finally:
                if handle is not None:
                    handle.close()
            if resp.status_code in RETRY_STATUS and attempt < attempts_left and self.backoff(attempt + 1, deadline):
                resp.close()
                guard.release()
                attempt += 1
                continue
            return self._guarded(resp, guard, deadline, limit, own_end)

    def _arm(self, what: str, limit: float, deadline: Deadline | None) -> tuple[tuple[float, float], Guard]:
        """One attempt's (connect, read) timeouts and its armed guard: ``limit`` seconds from now, or the
        operation's deadline if that comes first (a silent server trips the read timeout first: clearer message)."""
        until = time.monotonic() + limit
        if deadline is not None:
            if deadline.expired():
                raise self.deadline_error(deadline, what)
            until = min(until, deadline.at)
        left = max(0.01, until - time.monotonic())
        return (min(self.timeout[0], left), min(self.timeout[1], left)), arm(until + CUT_GRACE)

    def _request_error(self, exc: requests.exceptions.RequestException, guard: Guard, deadline: Deadline | None,
                       what: str, limit: float, timeout: tuple[float, float]) -> AcxError | None:
        """The one-line error for a failed attempt, by exception type; None for a connection that broke after
        opening (the caller may retry it). A guard that fired (or a read timeout past the deadline) is a cut."""
        read_timeout = isinstance(exc, requests.exceptions.ReadTimeout)
        if guard.fired or (read_timeout and deadline is not None and deadline.expired()):
            return self.cut_error(guard, deadline, what, limit)
        if isinstance(exc, requests.exceptions.ConnectTimeout):
            return RegistryError(f"registry {self.host} unreachable: connect timed out after {round(timeout[0], 2):g}s")
        if isinstance(exc, requests.exceptions.SSLError):
            return RegistryError(f"registry {self.host}: TLS error ({tls_reason(exc)}): pass --ca-file FILE to "
                                 "trust its CA, or --insecure to skip verification")
        if read_timeout:
            return RegistryError(f"registry {self.host}: no response within {round(timeout[1], 2):g}s ({what})")
        if isinstance(exc, requests.exceptions.ConnectionError):
            reason = connect_reason(exc)
            return None if reason is None else RegistryError(f"registry {self.host} unreachable: {reason}")
        return RegistryError(f"registry {self.host}: {exc.__class__.__name__} during {what.split(' ', 1)[0]}")

    def _tls_listener(self, url: str) -> RegistryError | None:
        """The error for a plain-HTTP request broken off by a registry that speaks TLS on that port, else None."""
        if not url.startswith("http://"):
            return None
        name, port = split_host_port(self.host, 80)
        if not speaks_tls(name, port, min(self.timeout[0], 2.0)):
            return None
        return RegistryError(f"registry {self.host} speaks TLS: pass --ca-file FILE or --insecure")

    def _guarded(self, resp: requests.Response, guard: Guard, deadline: Deadline | None,
                 limit: float, own_end: float) -> requests.Response:
        """The response keeps its guard (a slow body is cut too) until it is closed, which releases it."""
        self._guards[id(resp)] = (guard, deadline, limit, own_end)
        closer = resp.close

        def close(closer: Callable[[], None] = closer, guard: Guard = guard, key: int = id(resp)) -> None:
            try:
                closer()
            finally:
                guard.release()
                self._guards.pop(key, None)

        resp.close = close  # type: ignore[method-assign]
        return resp

    def received(self, resp: requests.Response, n: int) -> None:
        """``n`` body bytes of ``resp`` arrived: a work-sized deadline allows :data:`~acx_oci.timeutil.WORK_PER_MIB`
        s per MiB more (a large blob is work, not a stall; a trickle earns next to nothing), and the response's
        own cut moves with it, never past its ``--timeout`` (plus size) limit."""
        guard, deadline, _, own_end = self._guards.get(id(resp), (None, None, 0.0, 0.0))
        if guard is None or deadline is None or not deadline.is_sized:
            return
        deadline.allow("MiB", n / MIB, WORK_PER_MIB)
        guard.extend(min(own_end, deadline.at) + CUT_GRACE)

    def deadline_error(self, deadline: Deadline, what: str) -> DeadlineExceeded:
        """The error when the whole operation's deadline passed, naming it and what was under way."""
        return DeadlineExceeded(f"registry {self.host}: {deadline.describe()} passed before {what} completed")

    def cut_error(self, guard: Guard, deadline: Deadline | None, what: str, limit: float) -> RegistryError:
        """The error for a request whose guard cut it: the operation's deadline, or this request's time limit."""
        if deadline is not None and deadline.at <= guard.until - CUT_GRACE + 0.001:
            return self.deadline_error(deadline, what)
        return RegistryError(f"registry {self.host}: {what} not completed within {limit:g} s "
                             "(--timeout bounds each request's total time)")

    def broken(self, resp: requests.Response, what: str, exc: BaseException) -> RegistryError:
        """The error for a body read that failed: cut by our guard (time) or the connection broke."""
        entry = self._guards.get(id(resp))
        if entry is not None and entry[0].fired:
            return self.cut_error(entry[0], entry[1], what, entry[2])
        return ConnectionLost(f"registry {self.host}: {what}: connection failed while reading "
                              f"({exc.__class__.__name__})")

    @staticmethod
    def backoff(attempt: int, deadline: Deadline | None = None) -> bool:
        """Sleep before retry ``attempt``; False (no sleep) when the deadline would pass first."""
        pause = min(2.0, 0.1 * 2**attempt) * random.uniform(0.5, 1.0)
        if deadline is not None and deadline.remaining() <= pause:
            return False
        time.sleep(pause)
        return True

    @staticmethod
    def path(url: str) -> str:
        """The path of a URL without host or query, cut to 120 characters, for naming a request in messages."""
        return url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0][:120]

    def failure(self, resp: requests.Response, what: str) -> tuple[AcxError, str]:
        """(one-line error, the registry's error code or "") for a non-success response."""
        try:
            body = self.read_capped(resp, ERROR_BODY_CAP, what, truncate=True)
        except AcxError:
            body = b""
        detail = ""
        code = ""
        errs_message: object = None
        try:
            doc = loads(body, "error body", ijson=False)
            errs = doc.get("errors") if isinstance(doc, dict) else None
            if isinstance(errs, list) and errs and isinstance(errs[0], dict):
                code = str(errs[0].get("code", ""))
                errs_message = errs[0].get("message")
                detail = " ".join(str(errs[0].get(k, "")) for k in ("code", "message")).strip()
        except (ValueError, RecursionError):  # nested past the recursion limit is not JSON we read either
            detail = one_line(body.decode("utf-8", "replace"), 120)
        msg = f"registry {self.host}: {what}: HTTP {resp.status_code}" + (f" {one_line(detail)}" if detail else "")
        if resp.status_code == 404:
            return NotFoundError(msg), code
        denial = resp.headers.get(GATEWAY_DENIED_HEADER)
        if resp.status_code == 403 and denial is not None:
            # an acx-oci gateway's policy said no: a verdict (exit 1) with its reason, not a credentials problem
            reason = one_line(str(errs_message) if errs_message else denial, 600)
            return GatewayDenied(f"registry {self.host}: {what}: HTTP 403 DENIED by the gateway's policy: "
                                 f"{reason}"), code
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
                self.received(resp, len(chunk))
                if len(buf) > cap:
                    if truncate:
                        return bytes(buf[:cap])
                    raise RegistryError(f"registry {self.host}: {what}: response exceeds the {cap}-byte limit")
        except requests.exceptions.RequestException as exc:
            raise self.broken(resp, what, exc) from None
        finally:
            resp.close()
        return bytes(buf)

    def chunks(self, resp: requests.Response, what: str) -> Iterator[bytes]:
        """The body in pieces of at most :data:`CHUNK` bytes (cut by the request's guard like any read)."""
        try:
            for chunk in resp.iter_content(CHUNK):
                self.received(resp, len(chunk))
                yield chunk
        except requests.exceptions.RequestException as exc:
            raise self.broken(resp, what, exc) from None
