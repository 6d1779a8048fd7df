"""Wall-clock bounds on blocking HTTP: cut a request's sockets when its time is up.

``requests``/``urllib3`` timeouts bound each socket operation, so a server that
sends one byte a second (a slow-retrieval attack in the TUF threat model)
never trips them: the status line, the headers and the body can each take
forever. A :class:`Guard` is armed for one request with an absolute monotonic
end; every connection the request uses registers its socket with the guard of
its thread (through :class:`GuardedAdapter`'s pools), and one watchdog thread
shuts those sockets down when the end passes. The blocked ``recv``/``send``
returns at once, the caller sees a broken connection and asks
:attr:`Guard.fired` whether it was us.
"""

from __future__ import annotations

import contextlib
import heapq
import ipaddress
import itertools
import socket
import threading
import time
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError

_local = threading.local()
PRUNE_AT = 4096


class Guard:
    """One request's cut-off: the sockets it used are shut down at ``until`` unless released first."""

    def __init__(self, until: float) -> None:
        self.until = until
        self.fired = False
        self._done = False
        self._conns: list[Any] = []
        self._lock = threading.Lock()

    def watch(self, conn: Any) -> None:
        """Register a connection (its socket may not exist yet; connect registers again)."""
        with self._lock:
            if self._done:
                return
            conn._acx_guard = self  # the newest request on a pooled connection owns it
            if conn not in self._conns:
                self._conns.append(conn)
            if self.fired:
                _cut(conn)

    def fire(self) -> None:
        """Cut the sockets now (the deadline thread calls this); connections another request reuses are spared."""
        with self._lock:
            if self._done:
                return
            self.fired = True
            for conn in self._conns:
                if getattr(conn, "_acx_guard", None) is self:  # not since reused by a later request
                    _cut(conn)

    def extend(self, until: float) -> None:
        """Move the cut-off later (a work-sized deadline grew while this request's body was arriving)."""
        with self._lock:
            self.until = max(self.until, until)

    @property
    def released(self) -> bool:
        """Whether the request finished, so the deadline thread can drop this guard from its heap."""
        return self._done

    def release(self) -> None:
        """The request is over: never touch its (possibly pooled, reused) connections again."""
        with self._lock:
            self._done = True
            self._conns.clear()

    def __enter__(self) -> Guard:
        self._outer = getattr(_local, "guard", None)
        _local.guard = self
        return self

    def __exit__(self, *exc: object) -> None:
        """Leave the thread's current-guard slot; the guard stays armed until :meth:`release`."""
        _local.guard = self._outer


def _cut(conn: Any) -> None:
    sock = getattr(conn, "sock", None)
    if sock is None:
        return
    with contextlib.suppress(OSError):  # the plain socket's shutdown: an SSL socket keeps its state
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Watchdog:
    """One daemon thread firing guards in deadline order."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Guard]] = []
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, guard: Guard) -> None:
        with self._cond:
            if len(self._heap) >= PRUNE_AT:  # released guards wait for their time in the heap: drop them
                self._heap = [e for e in self._heap if not e[2].released]
                heapq.heapify(self._heap)
            heapq.heappush(self._heap, (guard.until, next(self._seq), guard))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="acx-net-guard", daemon=True)
                self._thread.start()
            if self._heap[0][2] is guard:  # only an earlier end changes how long the watchdog sleeps
                self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap:
                    self._cond.wait()
                until, _, guard = self._heap[0]
                wait = until - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._heap)
                if guard.until > until and not guard.released:  # extended since it was armed: wait again
                    heapq.heappush(self._heap, (guard.until, next(self._seq), guard))
                    continue
            guard.fire()


_WATCHDOG = _Watchdog()


def arm(until: float) -> Guard:
    """A guard that fires at ``until`` (monotonic); enter it around the request, release it after the body."""
    guard = Guard(until)
    _WATCHDOG.arm(guard)
    return guard


def _watch(conn: Any) -> None:
    guard = getattr(_local, "guard", None)
    if guard is not None:
        guard.watch(conn)


def _resolve_in_time(host: str, port: int, conn: Any) -> list[str] | None:
    """The addresses of ``host``, looked up within the current guard's time; None without a guard or for an
    IP literal. ``getaddrinfo`` blocks with no socket to shut down, so a slow resolver (a hostile registry's
    own name server, say) would hold a request past its end: the lookup runs in a daemon thread instead."""
    guard = getattr(_local, "guard", None)
    try:
        ipaddress.ip_address(host.strip("[]"))
        return None
    except ValueError:
        pass
    if guard is None:
        return None
    box: dict[str, Any] = {}

    def lookup() -> None:
        try:
            box["found"] = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
        except OSError as exc:
            box["error"] = exc

    thread = threading.Thread(target=lookup, name="acx-net-dns", daemon=True)
    thread.start()
    thread.join(max(0.0, guard.until - time.monotonic()))
    if thread.is_alive():
        guard.fire()
        raise NameResolutionError(host, conn, socket.gaierror(f"{host}: not resolved in time"))
    if "error" in box:
        err = box["error"]
        raise NameResolutionError(host, conn, err if isinstance(err, socket.gaierror) else socket.gaierror(str(err)))
    return list(dict.fromkeys(str(info[4][0]) for info in box["found"]))


def _connect_resolved(conn: Any, new_conn: Any) -> Any:
    """``new_conn()`` to each address resolved in time in turn (urllib3's own fallback order), the name kept."""
    addresses = _resolve_in_time(conn._dns_host, conn.port, conn)
    if not addresses:
        return new_conn()
    name = conn._dns_host
    failure: Exception | None = None
    try:
        for address in addresses:
            conn._dns_host = address
            try:
                return new_conn()
            except (NewConnectionError, ConnectTimeoutError) as exc:
                failure = exc
        raise failure if failure is not None else NewConnectionError(conn, f"{name}: no address")
    finally:
        conn._dns_host = name


class _HTTPConnection(HTTPConnection):
    def _new_conn(self) -> Any:
        return _connect_resolved(self, super()._new_conn)

    def connect(self) -> None:
        super().connect()
        _watch(self)


class _HTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> Any:
        return _connect_resolved(self, super()._new_conn)

    def connect(self) -> None:
        super().connect()
        _watch(self)


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection

    def _make_request(self, conn: Any, *args: Any, **kwargs: Any) -> Any:
        _watch(conn)
        return super()._make_request(conn, *args, **kwargs)


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection

    def _make_request(self, conn: Any, *args: Any, **kwargs: Any) -> Any:
        _watch(conn)
        return super()._make_request(conn, *args, **kwargs)


class GuardedAdapter(HTTPAdapter):
    """An ``HTTPAdapter`` whose connections register with the current thread's :class:`Guard`."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        """Make the pools build our connection classes, which register each socket with the thread's Guard."""
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}

    def build_response(self, req: Any, resp: Any) -> Any:
        """A redirect's body is dropped unread: ``requests`` reads it whole (decompressed, no cap) to reuse the
        connection, so a hostile server's 302 with an endless or gzip-bomb body would fill memory."""
        response = super().build_response(req, resp)
        if response.is_redirect:
            response._content = b""
            response._content_consumed = True  # type: ignore[attr-defined]
            with contextlib.suppress(Exception):
                resp.close()  # the connection goes with it: a body left unread cannot be reused
        return response

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        """Through ``HTTPS_PROXY`` too (an HTTP proxy's pools; a SOCKS proxy keeps per-read timeouts only)."""
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
        return manager
