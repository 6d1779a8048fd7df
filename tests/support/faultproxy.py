"""A fault-injecting HTTP proxy on loopback, in front of the real registry.

One request per client connection (``Connection: close`` both ways keeps the
framing trivial): the request head is read and matched against the rules
(method, path regex, Nth occurrence); the first rule that matches decides
what happens to that exchange:

- ``drop``: close the client connection without an answer;
- ``reset``: forward ``after`` request-body bytes upstream, then reset both
  connections (RST, SO_LINGER 0) — a connection lost mid-upload;
- ``status``: drain the request body, answer ``status`` without forwarding;
- ``delay``: wait ``seconds``, then forward;
- ``trickle``: forward, send the answer one byte per ``interval`` seconds
  (status line and headers too: a slow-retrieval server; with ``head_fast``
  the head goes at once and only the body trickles);
- ``truncate``: forward, send the first ``after`` bytes of the answer, close;
- ``extra``: forward, then send ``extra`` more body bytes than upstream did
  (a body that streams past its descriptor size), close-delimited (no
  Content-Length) unless ``declare``, which announces the longer length;
  with ``interval`` > 0 the extra bytes trickle.

Runs its own event loop in a daemon thread; ``log`` records (method, path, action), ``stamps`` when.
"""

from __future__ import annotations

import asyncio
import re
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Rule:
    action: str
    method: str = ".*"
    path: str = ".*"
    nth: int | None = None  # 1-based occurrence among matching requests; None: every one
    status: int = 503
    seconds: float = 0.0
    interval: float = 1.0
    after: int = 0
    extra: int = 0
    declare: bool = False
    head_fast: bool = False
    seen: int = field(default=0, compare=False)

    def matches(self, method: str, path: str) -> bool:
        if not re.fullmatch(self.method, method) or not re.search(self.path, path):
            return False
        self.seen += 1
        return self.nth is None or self.seen == self.nth


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.rules: list[Rule] = []
        self.log: list[tuple[str, str, str]] = []
        self.stamps: list[float] = []  # time.monotonic() of each request in ``log``, as it arrived
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._thread = threading.Thread(target=self._run, daemon=True, name="faultproxy")
        self._thread.start()
        self._ready.wait(10)
        assert self._server is not None
        self.host = f"127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    def add(self, action: str, **kwargs: Any) -> Rule:
        rule = Rule(action, **kwargs)
        with self._lock:
            self.rules.append(rule)
        return rule

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        async def shutdown() -> None:
            """Abort every connection and let each handler end on its own (cancelling them makes asyncio's
            stream callback log a CancelledError)."""
            if self._server is not None:
                self._server.close()
            for w in list(self._writers):
                w.transport.abort()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if tasks:
                await asyncio.wait(tasks, timeout=5)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    # ------------------------------------------------------------------ internals

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)

        self._loop.run_until_complete(start())
        self._ready.set()
        self._loop.run_forever()
        self._loop.close()

    def _decide(self, method: str, path: str) -> Rule | None:
        with self._lock:
            self.stamps.append(time.monotonic())
            for rule in self.rules:
                if rule.matches(method, path):
                    self.log.append((method, path, rule.action))
                    return rule
            self.log.append((method, path, "pass"))
        return None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_writer: asyncio.StreamWriter | None = None
        self._writers.add(writer)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = [ln for ln in lines[1:] if ln and not ln.lower().startswith(("connection:", "keep-alive:"))]
            length = next((int(h.split(":", 1)[1]) for h in headers if h.lower().startswith("content-length:")), 0)
            rule = self._decide(method, target.split("?", 1)[0])
            action = rule.action if rule else "pass"
            if action == "drop":
                return
            if action == "status":
                assert rule is not None
                await reader.readexactly(length)
                writer.write(f"HTTP/1.1 {rule.status} Injected\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                             .encode())
                await writer.drain()
                return
            if action == "delay":
                assert rule is not None
                await asyncio.sleep(rule.seconds)
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            self._writers.add(up_writer)
            forwarded = lines[0] + "\r\n" + "\r\n".join(headers) + "\r\nConnection: close\r\n\r\n"
            up_writer.write(forwarded.encode("latin-1"))
            if action == "reset":
                assert rule is not None
                body = await reader.readexactly(min(rule.after, length))
                up_writer.write(body)
                await up_writer.drain()
                _reset(writer)
                _reset(up_writer)
                return
            remaining = length
            while remaining > 0:
                chunk = await reader.read(min(remaining, 65536))
                if not chunk:
                    return
                up_writer.write(chunk)
                remaining -= len(chunk)
            await up_writer.drain()
            await self._answer(rule, action, up_reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, OSError, ValueError, asyncio.LimitOverrunError):
            pass
        finally:
            for w in (writer, up_writer):
                if w is not None:
                    self._writers.discard(w)
                    if not w.is_closing():
                        w.close()

    async def _answer(self, rule: Rule | None, action: str, up: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        head = await up.readuntil(b"\r\n\r\n")
        if action == "extra":
            assert rule is not None
            text = head.decode("latin-1")
            m = re.search(r"(?im)^content-length:\s*(\d+)", text)
            declared = int(m.group(1)) if m else 0
            body = await up.readexactly(declared)
            if rule.declare:
                text = re.sub(r"(?im)^content-length:\s*\d+", f"Content-Length: {declared + rule.extra}", text)
            else:
                text = re.sub(r"(?im)^content-length:\s*\d+\r\n", "", text)
            payload = text.encode("latin-1") + body + b"x" * rule.extra
            if rule.interval <= 0:
                writer.write(payload)
                await writer.drain()
                return
            # the honest bytes at once, then the extra ones slowly (a download caught mid-way)
            writer.write(payload[: len(payload) - rule.extra])
            await writer.drain()
            for _ in range(rule.extra):
                writer.write(b"x")
                await writer.drain()
                await asyncio.sleep(rule.interval)
            return
        rest = await up.read()
        payload = head + rest
        if action == "truncate":
            assert rule is not None
            writer.write(payload[: rule.after])
            await writer.drain()
            return
        if action == "trickle":
            assert rule is not None
            first = len(head) if rule.head_fast else 0
            writer.write(payload[:first])
            await writer.drain()
            for i in range(first, len(payload)):
                writer.write(payload[i : i + 1])
                await writer.drain()
                await asyncio.sleep(rule.interval)
            return
        writer.write(payload)
        await writer.drain()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with RST instead of FIN: the peer sees 'connection reset by peer'."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
