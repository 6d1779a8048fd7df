"""The gateway's HTTP/1.1 keep-alive transport for proxied requests (an ``httpx`` transport), framed by ``h11``.

Measured on the proxy hop (``benchmarks/gateway.py``), httpx's default async transport (httpcore on anyio)
cost ~1.3 ms of CPU per proxied manifest GET on the 2-core test machine, about three times the server's own
share; this transport does the same work on asyncio streams directly. The wire format — request and
response heads, ``Content-Length``/chunked/read-to-close framing, keep-alive — is ``h11``'s (the parser
uvicorn serves the client side with), not hand-written; that costs ~90 µs of CPU per request over the
hand-framed version it replaced (``benchmarks/gateway_pool.py``: 242 -> 335 µs; httpcore 688 µs). httpx stays
the API the handlers use (requests, responses, errors), so only the wire is replaced:

* one origin, keep-alive connections reused LIFO (at most ``max_idle`` kept), at most ``max_connections``
  requests in flight (more wait up to the timeout, then ``PoolTimeout``);
* request bodies go out as framed by httpx's headers (``Content-Length``, else chunked) and are streamed
  with back-pressure, never buffered; response bodies are streamed to the caller in pieces;
* ``timeout`` bounds the connect and every read and write; a head over 64 KiB or anything h11 refuses (a bad
  status line, header, ``Content-Length`` or chunk) is a ``RemoteProtocolError``; a pooled connection the
  upstream closed meanwhile is retried once on a fresh one when the body can be resent.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import ssl
from collections.abc import AsyncIterator
from typing import Any

import h11
import httpx
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

_HEAD_LIMIT = 64 * 1024
_READ = 64 * 1024


class NoCookieJar(http.cookiejar.CookieJar):
    """A cookie jar that keeps nothing: the gateway's one upstream client serves every client, so a cookie the
    upstream sets for one must reach that client (it does, in the proxied headers) and never ride along on
    another client's requests (httpx's default jar would store it and send it with every later request)."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        """Keep no cookie from an upstream response (it reaches its own client in the relayed headers)."""
        return None

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        """Refuse a cookie set directly too, so the jar stays empty whoever calls it."""
        return None


class _Conn:
    """One upstream connection: its streams and the h11 state machine that frames it."""

    __slots__ = ("fed", "h11", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=_HEAD_LIMIT)
        self.fed = 0  # bytes given to h11 this cycle (h11 bounds an incomplete head only, not a whole one)

    def close(self) -> None:
        self.writer.close()

    async def next_event(self, timeout: float) -> Any:
        """The next h11 event, reading (each read bounded by ``timeout``) as h11 needs data; EOF is fed as EOF."""
        while True:
            event = self.h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            async with asyncio.timeout(timeout):
                data = await self.reader.read(_READ)
            self.fed += len(data)
            self.h11.receive_data(data)

    def head_size(self) -> int:
        """Bytes of this cycle h11 has consumed (right after the response head: the head's size)."""
        return self.fed - len(self.h11.trailing_data[0])

    def reusable(self) -> bool:
        """After a whole exchange: start the next cycle if both sides may go on (h11 knows who said close)."""
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
            self.h11.start_next_cycle()
            self.fed = len(self.h11.trailing_data[0])
            return not self.writer.is_closing()
        return False


class UpstreamTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 to one upstream over pooled asyncio streams (see the module docstring)."""

    def __init__(self, *, verify: bool = True, timeout: float = 30.0, connect_timeout: float = 5.0,
                 max_connections: int = 200, max_idle: int = 50, ssl_context: ssl.SSLContext | None = None) -> None:
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_idle = max_idle
        self._ssl: ssl.SSLContext | None = ssl_context  # given: the CA (or no verification) the CLI was told
        self._verify = verify
        self._idle: list[_Conn] = []
        self._slots = asyncio.Semaphore(max_connections)

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context(verify=self._verify)
        return self._ssl

    async def _connect(self, request: httpx.Request) -> _Conn:
        url = request.url
        tls = url.scheme == "https"
        port = url.port or (443 if tls else 80)
        try:
            async with asyncio.timeout(self.connect_timeout):
                reader, writer = await asyncio.open_connection(
                    url.host, port, limit=_HEAD_LIMIT, ssl=self._ssl_context() if tls else None,
                    server_hostname=url.host if tls else None)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"connect to {url.host}:{port} timed out", request=request) from None
        except OSError as exc:
            raise httpx.ConnectError(f"connect to {url.host}:{port}: {exc}", request=request) from None
        return _Conn(reader, writer)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """One exchange on a pooled connection (a stale one retried once on a fresh one), else a fresh one."""
        try:
            async with asyncio.timeout(self.timeout):
                await self._slots.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout("no upstream connection free", request=request) from None
        try:
            resendable = isinstance(request.stream, httpx.ByteStream)
            while self._idle:
                conn = self._idle.pop()
                if conn.reader.at_eof() or conn.writer.is_closing():
                    conn.close()
                    continue
                resp = await self._exchange(conn, request, reused=resendable)
                if resp is not None:
                    return resp
                conn.close()  # closed by the upstream while pooled: retry (the body can be resent)
            fresh = await self._exchange(await self._connect(request), request, reused=False)
            assert fresh is not None  # only a reused connection reports "stale"
            return fresh
        except BaseException:
            self._slots.release()
            raise

    async def _exchange(self, conn: _Conn, request: httpx.Request, reused: bool) -> httpx.Response | None:
        """The response; None if ``reused`` and the connection turned out closed before a byte came back."""
        try:
            await self._write_request(conn, request)
            head = await self._read_head(conn, request, reused)
        except BaseException:
            conn.close()
            raise
        if head is None:
            return None
        stream = _Body(self, conn, request)
        return httpx.Response(head.status_code, headers=head.headers.raw_items(), stream=stream,
                              extensions={"http_version": b"HTTP/" + head.http_version,
                                          "reason_phrase": head.reason})

    async def _write_request(self, conn: _Conn, request: httpx.Request) -> None:
        w, body, c = conn.writer, request.stream, conn.h11
        if not isinstance(body, httpx.AsyncByteStream):
            raise httpx.WriteError("a synchronous request body on the async transport", request=request)
        try:
            head = c.send(h11.Request(method=request.method.encode("ascii"), target=request.url.raw_path,
                                      headers=request.headers.raw))
            async with asyncio.timeout(self.timeout):
                if isinstance(body, httpx.ByteStream):  # in memory: one write
                    data = b"".join([piece async for piece in body])
                    w.write(b"".join([head or b"", c.send(h11.Data(data=data)) or b"" if data else b"",
                                      c.send(h11.EndOfMessage()) or b""]))
                    await w.drain()
                    return
                w.write(head or b"")
            async for chunk in body:
                if not chunk:
                    continue
                async with asyncio.timeout(self.timeout):
                    w.write(c.send(h11.Data(data=chunk)) or b"")
                    await w.drain()
            async with asyncio.timeout(self.timeout):
                w.write(c.send(h11.EndOfMessage()) or b"")
                await w.drain()
        except h11.LocalProtocolError as exc:  # e.g. a body longer or shorter than its Content-Length
            raise httpx.LocalProtocolError(f"request cannot be framed: {exc}", request=request) from None
        except TimeoutError:
            raise httpx.WriteTimeout("upstream write timed out", request=request) from None
        except OSError as exc:
            raise httpx.WriteError(f"upstream write failed: {exc}", request=request) from None

    async def _read_head(self, conn: _Conn, request: httpx.Request, reused: bool) -> h11.Response | None:
        """The final response head (1xx skipped); None for a reused connection that closed before answering."""
        while True:
            try:
                event = await conn.next_event(self.timeout)
            except TimeoutError:
                raise httpx.ReadTimeout("upstream read timed out", request=request) from None
            except h11.RemoteProtocolError as exc:
                if reused and conn.fed == 0:
                    return None  # EOF before a byte of the answer: closed while pooled
                raise httpx.RemoteProtocolError(f"bad upstream response: {exc}", request=request) from None
            except OSError as exc:
                if reused:
                    return None
                raise httpx.ReadError(f"upstream read failed: {exc}", request=request) from None
            if conn.head_size() > _HEAD_LIMIT:
                raise httpx.RemoteProtocolError("upstream response head over 64 KiB", request=request)
            if isinstance(event, h11.Response):
                return event
            if not isinstance(event, h11.InformationalResponse):
                raise httpx.RemoteProtocolError(f"upstream closed the connection mid-response ({event!r})",
                                                request=request)

    def release(self, conn: _Conn, reusable: bool) -> None:
        """A response is finished with: its connection back to the pool if whole and reusable, its slot free."""
        if reusable and len(self._idle) < self.max_idle:
            self._idle.append(conn)
        else:
            conn.close()
        self._slots.release()

    async def aclose(self) -> None:
        """Close the idle connections (ones lent out close when their responses do)."""
        while self._idle:
            self._idle.pop().close()


class _Body(httpx.AsyncByteStream):
    """A response body read from the connection as the caller iterates; the connection goes back on close."""

    def __init__(self, pool: UpstreamTransport, conn: _Conn, request: httpx.Request) -> None:
        self._pool, self._conn, self._request = pool, conn, request
        self._done = False
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        conn, timeout = self._conn, self._pool.timeout
        try:
            while True:
                event = await conn.next_event(timeout)
                if isinstance(event, h11.Data):
                    yield bytes(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    break
                else:
                    raise h11.RemoteProtocolError(f"unexpected {type(event).__name__}")
        except TimeoutError:
            raise httpx.ReadTimeout("upstream read timed out", request=self._request) from None
        except h11.RemoteProtocolError:
            raise httpx.RemoteProtocolError("upstream body cut short or badly framed", request=self._request) \
                from None
        except OSError as exc:
            raise httpx.ReadError(f"upstream read failed: {exc}", request=self._request) from None
        self._done = True

    async def aclose(self) -> None:
        """Give the connection back (reused only if the body was read to its end and h11 says both may go on)."""
        if not self._closed:
            self._closed = True
            self._pool.release(self._conn, self._done and self._conn.reusable())


SMALL_BODY = 1024 * 1024


class _Relay(Response):
    """An upstream response of known small size relayed as is: head and body sent straight through, with no
    disconnect-listener task (Starlette's StreamingResponse starts one per response, which was a quarter of the
    proxy hop's cost for a manifest). A client that leaves costs at most the rest of this small body."""

    def __init__(self, upstream: httpx.Response, headers: list[tuple[bytes, bytes]]) -> None:
        self.upstream = upstream
        self.status_code = upstream.status_code
        self.raw_headers = headers
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            async for chunk in self.upstream.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await self.upstream.aclose()


def relay_small(upstream: httpx.Response, headers: list[tuple[bytes, bytes]]) -> Response | None:
    """A :class:`_Relay` for an upstream response that declares at most ``SMALL_BODY`` bytes; else None."""
    length = upstream.headers.get("content-length", "")
    if length.isdigit() and int(length) <= SMALL_BODY:
        return _Relay(upstream, headers)
    return None
