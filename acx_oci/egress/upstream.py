"""The proxy's side towards the provider: one CA bundle for every game, no cookies kept, connections that
can be cut when a game stops (a blocked read is not woken by closing its socket), and the key scrubbed from
anything relayed back to the agent."""

from __future__ import annotations

import contextlib
import http.cookiejar
import socket
import ssl
import threading
from collections.abc import Iterator
from typing import Any

import httpcore
import httpx

_SSL: ssl.SSLContext | None = None


def ssl_context() -> ssl.SSLContext:
    """One CA bundle for every game's client (loading it costs ~30 ms and ~0.75 MiB each time): no state."""
    global _SSL
    if _SSL is None:
        _SSL = ssl.create_default_context()
    return _SSL


class NoCookiePolicy(http.cookiejar.DefaultCookiePolicy):
    """Upstream cookies are neither stored nor sent: nothing carries over between a game's requests."""

    def set_ok(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
        """Refuse every cookie the provider sets, so no state survives from one request (or game) to the next."""
        return False


class TrackedStream(httpcore.NetworkStream):
    """An upstream connection :meth:`ModelProxy.stop` can cut: closing a socket does not wake a thread
    blocked reading it, ``shutdown`` does (a held answer would otherwise keep its thread for the deadline)."""

    def __init__(self, inner: httpcore.NetworkStream, live: set[TrackedStream], lock: threading.Lock) -> None:
        self.inner, self.live, self.lock = inner, live, lock
        self.user = threading.get_ident()  # the thread whose request uses it now (a pooled one moves between them)
        with lock:
            live.add(self)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Delegate to the wrapped stream, noting which thread's request reads it (a deadline cuts that one)."""
        self.user = threading.get_ident()
        return self.inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Delegate to the wrapped stream, noting which thread's request writes it."""
        self.user = threading.get_ident()
        self.inner.write(buffer, timeout)

    def close(self) -> None:
        """Close and stop tracking, so a later ``cut_all`` does not touch a finished connection."""
        with self.lock:
            self.live.discard(self)
        self.inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        """Upgrade to TLS; the TLS stream replaces this one in the live set (it is the one a cut must reach)."""
        with self.lock:
            self.live.discard(self)
        return TrackedStream(self.inner.start_tls(ssl_context, server_hostname, timeout), self.live, self.lock)

    def get_extra_info(self, info: str) -> Any:
        """Delegate to the wrapped stream (``cut`` reads its ``socket`` from here)."""
        return self.inner.get_extra_info(info)

    def cut(self) -> None:
        """``shutdown`` the socket: wakes a thread blocked reading it, which ``close`` would not."""
        sock = self.inner.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class TrackingBackend(httpcore.SyncBackend):
    """httpcore's sync backend with every open connection remembered, so ``ModelProxy.stop`` can cut them all."""

    def __init__(self) -> None:
        self.live: set[TrackedStream] = set()
        self.lock = threading.Lock()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        """Open the TCP connection as a tracked stream."""
        return TrackedStream(super().connect_tcp(host, port, timeout, local_address, socket_options), self.live,
                        self.lock)

    def cut_all(self) -> None:
        """Cut every live connection: requests still waiting on the provider end now, not at their deadline."""
        with self.lock:
            live = list(self.live)
        for s in live:
            s.cut()

    def cut_thread(self, ident: int) -> None:
        """Cut the connections the thread ``ident`` is using (its request passed its deadline)."""
        with self.lock:
            live = [s for s in self.live if s.user == ident]
        for s in live:
            s.cut()

    @contextlib.contextmanager
    def deadline(self, seconds: float) -> Iterator[threading.Event]:
        """A whole-request deadline for the calling thread's upstream request: httpx's timeouts bound each read,
        so a provider sending a byte at a time (headers or body) would otherwise hold the request for ever.
        At ``seconds`` the request's connection is cut (its read fails) and the yielded event is set."""
        passed = threading.Event()
        ident = threading.get_ident()

        def cut() -> None:
            passed.set()
            self.cut_thread(ident)

        timer = threading.Timer(max(0.0, seconds), cut)
        timer.daemon = True
        timer.start()
        try:
            yield passed
        finally:
            timer.cancel()


def upstream_transport(backend: TrackingBackend) -> httpx.HTTPTransport:
    """httpx's transport on a pool whose connections go through ``backend`` (httpx takes no backend itself)."""
    t = httpx.HTTPTransport(verify=ssl_context(), trust_env=False)
    assert isinstance(getattr(t, "_pool", None), httpcore.ConnectionPool)
    t._pool = httpcore.ConnectionPool(ssl_context=ssl_context(), network_backend=backend)
    return t


class KeyScrubber:
    """Removes the verifier's key from what goes back to the agent, also when it spans chunks: a suffix that
    could begin the key is held back until the next chunk (SSE events end in newlines, so nothing usually is)."""

    MASK = b"[acx: provider key removed]"

    def __init__(self, key: str | None) -> None:
        self.key = key.encode("ascii") if key else b""
        self.held = b""

    def feed(self, chunk: bytes) -> bytes:
        """The chunk with the key masked, minus a held-back tail that might begin the key in the next chunk."""
        if not self.key:
            return chunk
        buf = (self.held + chunk).replace(self.key, self.MASK)
        keep = next((n for n in range(min(len(self.key) - 1, len(buf)), 0, -1) if self.key.startswith(buf[-n:])), 0)
        self.held = buf[len(buf) - keep:] if keep else b""
        return buf[:len(buf) - keep]

    def end(self) -> bytes:
        """What is still held back, released when the stream ends (it cannot be the key any more)."""
        out, self.held = self.held, b""
        return out

    def text(self, value: str) -> str:
        """Mask the key in one whole string, such as a relayed response header."""
        return value.replace(self.key.decode("ascii"), self.MASK.decode("ascii")) if self.key else value
