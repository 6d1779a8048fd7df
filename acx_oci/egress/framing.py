"""The proxy's side towards the agent: one Unix-socket connection framed by ``h11`` (no hand-written HTTP),
read within the request bounds and answered whole, or relayed to without ever raising."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import h11

from acx_oci.model import modelapi as ma

_CHUNK = 65536


def refusal_body(r: ma.Refusal) -> bytes:
    """What a refused agent reads: the reason code and message, typed ``acx_proxy`` (never the provider's)."""
    return json.dumps({"error": {"type": "acx_proxy", "code": r.code, "message": r.message}}).encode()


class AgentConnection:
    """One agent connection: its ``h11`` state and socket, read event by event, answered in whole responses."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=ma.MAX_HEADER_BYTES)

    def next_event(self) -> Any:
        """The next ``h11`` event, reading the socket as needed (its timeout bounds each wait)."""
        while True:
            ev = self.conn.next_event()
            if ev is h11.NEED_DATA:
                data = self.sock.recv(_CHUNK)
                self.conn.receive_data(data)
                continue
            return ev

    def body(self, request_seconds: float) -> bytes | None:
        """The request body, or None when it is over the bound, malformed or slower than ``request_seconds``."""
        parts: list[bytes] = []
        size = 0
        deadline = time.monotonic() + request_seconds
        while True:
            if time.monotonic() > deadline:
                return None
            ev = self.next_event()
            if isinstance(ev, h11.Data):
                size += len(ev.data)
                if size > ma.MAX_REQUEST_BYTES:
                    return None
                parts.append(bytes(ev.data))
            elif isinstance(ev, h11.EndOfMessage):
                return b"".join(parts)
            else:
                return None

    def answer(self, status: int, body: bytes, headers: list[tuple[str, str]] | None = None,
               close: bool = False) -> None:
        """A whole response; ``headers`` may name the content-type (JSON otherwise)."""
        given = [h for h in headers or [] if h[0] not in ("content-length", "transfer-encoding", "connection")]
        if not any(n == "content-type" for n, _ in given):
            given.insert(0, ("content-type", "application/json"))
        hs = [*given, ("content-length", str(len(body)))]
        if close:
            hs.append(("connection", "close"))
        conn = self.conn
        self.sock.sendall(b"".join(conn.send(ev) or b"" for ev in (h11.Response(status_code=status, headers=hs),
                                                                   h11.Data(data=body), h11.EndOfMessage())))

    def relay(self) -> AgentSide:
        """A writer for an answer relayed as it arrives (see :class:`AgentSide`)."""
        return AgentSide(self.conn, self.sock)


class AgentSide:
    """Writes to the agent that never raise: an agent that hangs up or stops reading (its write times out) is
    its own doing — never the provider's failure — and the answer is still read to its end and recorded."""

    def __init__(self, conn: h11.Connection, sock: socket.socket) -> None:
        self.conn, self.sock, self.gone = conn, sock, False

    def send(self, event: Any) -> None:
        """Send one ``h11`` event; after the first failure, nothing more (``gone`` says so)."""
        if self.gone:
            return
        try:
            data = self.conn.send(event)
            if data:
                self.sock.sendall(data)
        except (OSError, h11.LocalProtocolError):
            self.gone = True
