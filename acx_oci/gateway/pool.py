"""A lean HTTP/1.1 keep-alive transport for the gateway's proxied requests (an ``httpx`` transport).

Measured on the proxy hop (``benchmarks/gateway.py``), httpx's default async transport (httpcore on anyio)
cost ~1.3 ms of CPU per proxied manifest GET on the 2-core test machine, about three times the server's own
share; this transport does the same work on asyncio streams directly. httpx stays the API the handlers
use (requests, responses, errors), so only the wire is replaced:

* one origin, keep-alive connections reused LIFO (at most ``max_idle`` kept), at most ``max_connections``
  requests in flight (more wait up to the timeout, then ``PoolTimeout``);
* request bodies are written as framed by httpx (``Content-Length``, else chunked) and streamed with
  back-pressure, never buffered; response bodies are framed by ``Content-Length``, chunked or close and
  streamed to the caller in pieces;
* ``timeout`` bounds the connect and every read and write; a head over 64 KiB, a bad status line, header or
  chunk size is a ``RemoteProtocolError``; a pooled connection the upstream closed meanwhile is retried once
  on a fresh one when the body can be resent.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

_HEAD_LIMIT = 64 * 1024
_READ = 64 * 1024
_NO_BODY_STATUS = frozenset({204, 304})


class NoCookies(http.cookiejar.CookieJar):
    """A cookie jar that keeps nothing: the gateway's one upstream client serves every client, so a cookie the
    upstream sets for one must reach that client (it does, in the proxied headers) and never ride along on
    another client's requests (httpx's default jar would store it and send it with every later request)."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        return None


class _Conn:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def close(self) -> None:
        self.writer.close()


class UpstreamTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 to one upstream over pooled asyncio streams (see the module docstring)."""

    def __init__(self, *, verify: bool = True, timeout: float = 30.0, connect_timeout: float = 5.0,
                 max_connections: int = 200, max_idle: int = 50) -> None:
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_idle = max_idle
        self._ssl: ssl.SSLContext | None = None
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
        status, reason, headers, version = head
        length, chunked = _framing(request, status, headers)
        keep = version == b"HTTP/1.1" and not _has_token(headers, b"connection", b"close") \
            and not _has_token(request.headers.raw, b"connection", b"close") and (length is not None or chunked)
        stream = _Body(self, conn, request, length, chunked, keep)
        return httpx.Response(status, headers=headers, stream=stream,
                              extensions={"http_version": version, "reason_phrase": reason})

    async def _write_request(self, conn: _Conn, request: httpx.Request) -> None:
        head = [request.method.encode("ascii"), b" ", request.url.raw_path, b" HTTP/1.1\r\n"]
        for name, value in request.headers.raw:
            head += [name, b": ", value, b"\r\n"]
        head.append(b"\r\n")
        chunked = _has_token(request.headers.raw, b"transfer-encoding", b"chunked")
        w, body = conn.writer, request.stream
        if not isinstance(body, httpx.AsyncByteStream):
            raise httpx.WriteError("a synchronous request body on the async transport", request=request)
        try:
            async with asyncio.timeout(self.timeout):
                if isinstance(body, httpx.ByteStream) and not chunked:
                    w.write(b"".join(head) + b"".join([c async for c in body]))
                    await w.drain()
                    return
                w.write(b"".join(head))
            async for chunk in body:
                if not chunk:
                    continue
                async with asyncio.timeout(self.timeout):
                    w.write(b"%x\r\n%b\r\n" % (len(chunk), chunk) if chunked else chunk)
                    await w.drain()
            if chunked:
                async with asyncio.timeout(self.timeout):
                    w.write(b"0\r\n\r\n")
                    await w.drain()
        except TimeoutError:
            raise httpx.WriteTimeout("upstream write timed out", request=request) from None
        except OSError as exc:
            raise httpx.WriteError(f"upstream write failed: {exc}", request=request) from None

    async def _read_head(self, conn: _Conn, request: httpx.Request,
                         reused: bool) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes] | None:
        while True:
            try:
                async with asyncio.timeout(self.timeout):
                    raw = await conn.reader.readuntil(b"\r\n\r\n")
            except TimeoutError:
                raise httpx.ReadTimeout("upstream read timed out", request=request) from None
            except asyncio.IncompleteReadError as exc:
                if reused and not exc.partial:
                    return None
                raise httpx.RemoteProtocolError("upstream closed the connection mid-response", request=request) \
                    from None
            except asyncio.LimitOverrunError:
                raise httpx.RemoteProtocolError("upstream response head over 64 KiB", request=request) from None
            except OSError as exc:
                if reused:
                    return None
                raise httpx.ReadError(f"upstream read failed: {exc}", request=request) from None
            status, reason, headers, version = _parse_head(raw, request)
            if not 100 <= status < 200 or status == 101:
                return status, reason, headers, version

    def release(self, conn: _Conn, keep: bool) -> None:
        if keep and len(self._idle) < self.max_idle and not conn.writer.is_closing():
            self._idle.append(conn)
        else:
            conn.close()
        self._slots.release()

    async def aclose(self) -> None:
        while self._idle:
            self._idle.pop().close()


def _parse_head(raw: bytes, request: httpx.Request) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes]:
    lines = raw[:-4].split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or parts[0] not in (b"HTTP/1.1", b"HTTP/1.0") or not parts[1].isdigit() or len(parts[1]) != 3:
        raise httpx.RemoteProtocolError(f"bad upstream status line {lines[0][:80]!r}", request=request)
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not name or name != name.strip() or line[:1] in (b" ", b"\t"):
            raise httpx.RemoteProtocolError(f"bad upstream header line {line[:80]!r}", request=request)
        headers.append((name, value.strip(b" \t")))
    return int(parts[1]), parts[2] if len(parts) > 2 else b"", headers, parts[0]


def _has_token(headers: list[tuple[bytes, bytes]], name: bytes, token: bytes) -> bool:
    return any(k.lower() == name and token in (t.strip().lower() for t in v.split(b",")) for k, v in headers)


def _framing(request: httpx.Request, status: int,
             headers: list[tuple[bytes, bytes]]) -> tuple[int | None, bool]:
    """(Content-Length, chunked) of a response body; (0, False) for none; (None, False): read to close."""
    if request.method == "HEAD" or status in _NO_BODY_STATUS:
        return 0, False
    if _has_token(headers, b"transfer-encoding", b"chunked"):
        return None, True
    lengths = {v for k, v in headers if k.lower() == b"content-length"}
    if not lengths:
        return None, False
    if len(lengths) != 1 or not next(iter(lengths)).isdigit():
        raise httpx.RemoteProtocolError("bad upstream Content-Length", request=request)
    return int(next(iter(lengths))), False


class _Body(httpx.AsyncByteStream):
    """A response body read from the connection as the caller iterates; the connection goes back on close."""

    def __init__(self, pool: UpstreamTransport, conn: _Conn, request: httpx.Request, length: int | None,
                 chunked: bool, keep: bool) -> None:
        self._pool, self._conn, self._request = pool, conn, request
        self._length, self._chunked, self._keep = length, chunked, keep
        self._done = length == 0
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for piece in (self._chunks() if self._chunked else self._plain()):
                yield piece
        except TimeoutError:
            raise httpx.ReadTimeout("upstream read timed out", request=self._request) from None
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            raise httpx.RemoteProtocolError("upstream body cut short or badly framed", request=self._request) \
                from None
        except OSError as exc:
            raise httpx.ReadError(f"upstream read failed: {exc}", request=self._request) from None
        self._done = True

    async def _plain(self) -> AsyncIterator[bytes]:
        reader, left = self._conn.reader, self._length
        while left is None or left > 0:
            async with asyncio.timeout(self._pool.timeout):
                data = await reader.read(_READ if left is None else min(_READ, left))
            if not data:
                if left is None:
                    return
                raise asyncio.IncompleteReadError(b"", left)
            if left is not None:
                left -= len(data)
            yield data

    async def _chunks(self) -> AsyncIterator[bytes]:
        reader, timeout = self._conn.reader, self._pool.timeout
        while True:
            async with asyncio.timeout(timeout):
                line = await reader.readuntil(b"\r\n")
            size_text = line.split(b";", 1)[0].strip()
            if not size_text or len(size_text) > 16 or any(c not in b"0123456789abcdefABCDEF" for c in size_text):
                raise ValueError("bad chunk size")
            size = int(size_text, 16)
            if size == 0:
                while True:  # trailers, up to the blank line
                    async with asyncio.timeout(timeout):
                        if await reader.readuntil(b"\r\n") == b"\r\n":
                            return
            while size > 0:
                async with asyncio.timeout(timeout):
                    data = await reader.read(min(_READ, size))
                if not data:
                    raise asyncio.IncompleteReadError(b"", size)
                size -= len(data)
                yield data
            async with asyncio.timeout(timeout):
                if await reader.readexactly(2) != b"\r\n":
                    raise ValueError("bad chunk end")

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.release(self._conn, self._keep and self._done)


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
