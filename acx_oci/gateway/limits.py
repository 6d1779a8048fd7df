"""The gateway's connection layer: a request-receipt deadline, idle timeouts, a connection limit, lingering close.

uvicorn alone gives none of these (docs/operations.md, "Gateway: limits on clients"): its
``timeout_keep_alive`` is armed only *after* a response, so a connection that sends nothing, or half a request
line, is held until the client goes away. :class:`GuardedH11Protocol` is uvicorn's h11 protocol with

* a **receipt deadline**: the request line and all headers must arrive within ``header_seconds`` of the
  request's first byte (of the connection, for its first request); otherwise ``408`` and close;
* an **idle timeout** between requests (uvicorn's keep-alive timer, set to ``idle_seconds``), while a
  request body is being read (``body_idle_seconds`` without a byte: close) and while a response waits for a
  client that does not read it (``body_idle_seconds`` with the send buffer full: close — the response holds
  one of the upstream pool's connections, and a few hundred unread downloads would hold them all);
* a **connection limit** (:class:`ConnectionGuard`): past ``max_connections``, the connections that are
  *waiting* — idle between requests or still sending their headers — are dropped, oldest first, so a flood of
  half-sent requests displaces itself instead of locking out the next compliant client; with none waiting,
  the request the *client* holds up slowest (a body trickled a byte at a time, a response it does not read)
  is dropped, so half-sent bodies cannot lock clients out either; only when every connection is moving is
  the newcomer refused;
* a **lingering close**: when the response is complete but the request body is not (a ``413``), the rest of the
  body is read and thrown away — at most ``linger_bytes``, for at most ``linger_seconds`` — before closing, so the
  client reads the answer instead of a connection reset.
"""

from __future__ import annotations

import asyncio
import resource
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

_TIMEOUT_408 = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\ncontent-length: 50\r\n"
                b"connection: close\r\n\r\nrequest headers not received within the deadline\r\n")

_GRACE_SECONDS = 1.0  # a request younger than this is never the slowest one (it has barely started)


@dataclass(frozen=True)
class ServerLimits:
    """What the gateway's server allows a client; the defaults are the CLI's."""

    header_seconds: float = 10.0  # request line + headers, from the request's first byte
    idle_seconds: float = 5.0  # keep-alive: between requests
    body_idle_seconds: float = 30.0  # silence while a request body is being read
    max_connections: int | None = None  # None: from RLIMIT_NOFILE (see connection_budget)
    linger_bytes: int = 16 * 1024 * 1024  # discarded after an early answer (413) before closing
    linger_seconds: float = 5.0


def raise_nofile_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit (a half-open flood needs file descriptors); the new soft."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft == resource.RLIM_INFINITY or (soft != resource.RLIM_INFINITY and soft >= target):
        return int(soft)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):
        return int(soft)
    return int(target)


def connection_budget(limits: ServerLimits, nofile: int) -> int:
    """Client connections allowed: as configured, else what the descriptor limit leaves after the upstream pool,
    worker threads and files (a quarter, at least 256 descriptors, kept in reserve)."""
    if limits.max_connections is not None:
        return max(1, limits.max_connections)
    return max(16, nofile - max(256, nofile // 4))


class ConnectionGuard:
    """All connections of one server, and the *waiting* ones (idle or receiving headers) in the order they began
    waiting: the first to drop when a new connection would pass the limit."""

    def __init__(self, max_connections: int) -> None:
        self.max_connections = max_connections
        self.open = 0
        self.dropped = 0
        self._waiting: OrderedDict[GuardedH11Protocol, None] = OrderedDict()
        self._busy: dict[GuardedH11Protocol, None] = {}

    def opened(self, conn: GuardedH11Protocol) -> None:
        """Count a new connection (waiting for its headers); past the limit drop the oldest waiting one, else the
        slowest stalled one, else the newcomer."""
        self.open += 1
        self._waiting[conn] = None
        while self.open > self.max_connections:
            victim = next((c for c in self._waiting if c is not conn), None) or self._slowest(conn)
            self.drop(victim or conn)  # nobody waiting and every request moving: refuse the newcomer

    def _slowest(self, newcomer: GuardedH11Protocol) -> GuardedH11Protocol | None:
        """The busy connection whose client holds its request up slowest (bytes per second), if any does."""
        now = time.monotonic()
        stalled = [c for c in self._busy if c is not newcomer and c.client_stalling(now)]
        return min(stalled, key=lambda c: c.client_rate(now), default=None)

    def drop(self, conn: GuardedH11Protocol) -> None:
        """Abort a connection now (waiting: no answer is owed; stalled by its client: it forfeits it)."""
        self.dropped += 1
        self.closed(conn)
        conn.abort_waiting()

    def waiting(self, conn: GuardedH11Protocol) -> None:
        """The connection is idle between requests: droppable, after every connection that began waiting before it."""
        self._busy.pop(conn, None)
        self._waiting.pop(conn, None)
        self._waiting[conn] = None

    def busy(self, conn: GuardedH11Protocol) -> None:
        """The connection is serving a request (or lingering): droppable only while its client stalls it."""
        self._waiting.pop(conn, None)
        self._busy[conn] = None

    def closed(self, conn: GuardedH11Protocol) -> None:
        """Forget a connection and free its place under the limit, once (a dropped one is closed again when lost)."""
        self._waiting.pop(conn, None)
        self._busy.pop(conn, None)
        if conn.counted:
            conn.counted = False
            self.open -= 1

    def __len__(self) -> int:
        return len(self._waiting)


class _Transport:
    """The real transport, with two changes.

    ``write()`` is coalesced per event-loop iteration: uvicorn writes a response's head and body separately, and
    on loopback each ``send()`` wakes the peer (on a loaded machine, a context switch): one ``send()`` per
    response instead of two. ``close()`` with a request body still arriving starts a lingering close.
    """

    def __init__(self, transport: asyncio.Transport, owner: GuardedH11Protocol,
                 loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._owner = owner
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        self._owner.progress += len(data)
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(data)

    def flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
            self._pending.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self.flush()
        if not self._owner.start_lingering():
            self._transport.close()

    def abort(self) -> None:
        self._pending.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the receipt deadline, body idle timeout, limit and lingering close above."""

    guard: ConnectionGuard
    limits: ServerLimits

    counted = False
    _timer: asyncio.TimerHandle | None = None
    _cycle_seen: object = None
    _lingering = False
    _linger_left = 0
    _got_bytes = False
    _stall: asyncio.TimerHandle | None = None  # the send buffer is full: the client is not reading
    busy_since = 0.0  # when the current request's head was complete
    progress = 0  # bytes the client moved since then: body bytes sent to us, response bytes we wrote

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Wrap the transport (coalesced writes, lingering close), arm the first receipt deadline, count it in."""
        self._raw = transport
        self.timeout_keep_alive = self.limits.idle_seconds  # type: ignore[assignment]  # uvicorn's, in seconds
        self._out = _Transport(transport, self, self.loop)
        super().connection_made(self._out)  # type: ignore[arg-type]
        self.counted = True
        self._arm(self.limits.header_seconds, self._receipt_expired)
        self.guard.opened(self)

    def connection_lost(self, exc: Exception | None) -> None:
        """Cancel this connection's timers and free its place under the limit."""
        self._disarm()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        self.guard.closed(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Feed h11, or discard while lingering; a first byte between requests starts the next receipt deadline."""
        if self._lingering:
            self._discard(data)
            return
        self.progress += len(data)
        if self.cycle is None or self.cycle.response_complete:
            # between requests: the first byte of the next one starts its receipt deadline
            self._got_bytes = True
            if self._timer is None:
                self._arm(self.limits.header_seconds, self._receipt_expired)
        super().data_received(data)
        self._body_timer()

    def handle_events(self) -> None:
        """Once a request's head is complete, the connection turns busy and the body idle timer takes over."""
        super().handle_events()
        cycle = self.cycle
        if cycle is not None and cycle is not self._cycle_seen and not self._lingering:
            # a new request's headers are complete: it is being served, no longer waiting
            self._cycle_seen = cycle
            self._got_bytes = False
            self.busy_since, self.progress = time.monotonic(), 0
            self.guard.busy(self)
            self._body_timer()

    def _body_timer(self) -> None:
        """While a request body is arriving, each byte restarts the body idle timer; once it is in, no timer."""
        cycle = self.cycle
        if self._lingering or cycle is None or cycle is not self._cycle_seen or cycle.response_complete:
            return
        if self.conn.their_state is h11.SEND_BODY:
            self._arm(self.limits.body_idle_seconds, self._body_idle)
        else:
            self._disarm()

    def on_response_complete(self) -> None:
        """Answered before the body was read: linger; else uvicorn's keep-alive timer, and back to waiting."""
        if self.conn.their_state is h11.SEND_BODY and self.start_lingering():
            return  # answered before the body was read: drain a bounded amount, then close
        self._disarm()
        super().on_response_complete()  # arms uvicorn's keep-alive (idle) timer
        if not self._raw.is_closing():
            self.guard.waiting(self)

    def pause_writing(self) -> None:
        """The client stopped reading (send buffer full): abort after ``body_idle_seconds`` unless it resumes."""
        super().pause_writing()
        if self._stall is None:
            self._stall = self.loop.call_later(self.limits.body_idle_seconds, self._write_stalled)

    def resume_writing(self) -> None:
        """The client reads again: the stall timer is cancelled."""
        super().resume_writing()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def _write_stalled(self) -> None:
        self._stall = None
        if self.flow.write_paused:  # nothing read for body_idle_seconds: the response is abandoned
            self.abort_waiting()

    def client_stalling(self, now: float) -> bool:
        """Whether the client, not the gateway, is what this request waits on: a body arriving while the gateway
        is ready for it, or a response the client is not reading (after a second's grace for a new request)."""
        if self._lingering or now - self.busy_since < _GRACE_SECONDS:
            return False
        sending = self.conn.their_state is h11.SEND_BODY and not self.flow.read_paused
        return sending or self.flow.write_paused

    def client_rate(self, now: float) -> float:
        """Bytes per second the client moved since this request's head: past the limit, the slowest stalled one goes."""
        return self.progress / max(now - self.busy_since, 1e-3)

    # ------------------------------------------------------------ timers and closing

    def _arm(self, seconds: float, callback: Any) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, callback)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _receipt_expired(self) -> None:
        self._timer = None
        if self.cycle is not None and not self.cycle.response_complete:
            return  # the request is being served
        if self._got_bytes:
            self._out.write(_TIMEOUT_408)
        self._close()

    def _body_idle(self) -> None:
        self._timer = None
        if self.flow.read_paused:  # the app is slow to consume, not the client slow to send
            self._arm(self.limits.body_idle_seconds, self._body_idle)
            return
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self._close()

    def _close(self) -> None:
        self._out.flush()
        self._raw.close()

    def abort_waiting(self) -> None:
        """Abort the connection without an answer; a request mid-flight sees a disconnect, so its handler stops."""
        self._disarm()
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:  # a stalled request: its handler sees a disconnect
            cycle.disconnected = True
            cycle.message_event.set()
        self._raw.abort()

    def start_lingering(self) -> bool:
        """Begin a lingering close if the request body is still arriving; False if there is nothing to drain."""
        if self._lingering:
            return True
        if self.conn.their_state is not h11.SEND_BODY or self._raw.is_closing():
            return False
        self._lingering = True
        self._linger_left = self.limits.linger_bytes
        self.guard.busy(self)
        self._arm(self.limits.linger_seconds, self._close)
        self._raw.resume_reading()
        self._discard(b"")
        return True

    def _discard(self, data: bytes) -> None:
        """Read the rest of the request body through h11 (so its end is seen) and drop it; close at end or bound."""
        self._linger_left -= len(data)
        try:
            if data:
                self.conn.receive_data(data)
            while True:
                event = self.conn.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED or isinstance(event, h11.EndOfMessage):
                    break
        except h11.RemoteProtocolError:
            event = h11.EndOfMessage()
        if isinstance(event, h11.EndOfMessage) or self._linger_left < 0 or event is h11.PAUSED:
            self._disarm()
            self._close()


def protocol_class(limits: ServerLimits, guard: ConnectionGuard) -> type[GuardedH11Protocol]:
    """The protocol class uvicorn instantiates per connection, bound to one server's limits and guard."""
    return type("GatewayH11Protocol", (GuardedH11Protocol,), {"limits": limits, "guard": guard})
