"""The gateway's upstream transport (acx_oci.gateway.pool) against a scripted HTTP/1.1 server on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from acx_oci.gateway.pool import NoCookieJar, UpstreamTransport

Handler = Callable[[bytes, bytes, asyncio.StreamWriter], Awaitable[bool]]


async def _read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes] | None:
    """(head, body) of one request; chunked bodies are de-chunked."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lower = head.lower()
    if b"transfer-encoding: chunked" in lower:
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return head, body
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    length = next((int(line.split(b":")[1]) for line in lower.split(b"\r\n") if line.startswith(b"content-length:")), 0)
    return head, await reader.readexactly(length)


async def _serve(handler: Handler) -> tuple[asyncio.Server, str, list[int]]:
    """A server calling ``handler(head, body, writer)`` per request; it returns False to close the connection."""
    connections: list[int] = []

    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            while (req := await _read_request(reader)) is not None:
                if not await handler(req[0], req[1], writer):
                    break
        finally:
            writer.close()

    server = await asyncio.start_server(on_conn, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}", connections


def _run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(test())  # type: ignore[arg-type]


def _client(timeout: float = 5.0) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=UpstreamTransport(timeout=timeout, connect_timeout=2.0), cookies=NoCookieJar())


def test_content_length_and_chunked_bodies_reuse_one_connection() -> None:
    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        if head.startswith(b"GET /plain"):
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhello")
        else:  # chunked, with an extension and a trailer
            w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b"3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n")
        await w.drain()
        return True

    async def test() -> None:
        server, base, conns = await _serve(handler)
        async with server, _client() as client:
            r1 = await client.get(f"{base}/plain")
            r2 = await client.get(f"{base}/chunked")
            r3 = await client.get(f"{base}/plain")
        assert (r1.text, r1.headers["x-a"], r2.text, r3.text) == ("hello", "1", "abcde", "hello")
        assert len(conns) == 1

    _run(test)


def test_a_body_read_to_close_is_not_reused_and_a_stale_connection_is_retried() -> None:
    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        if head.startswith(b"GET /close"):
            w.write(b"HTTP/1.1 200 OK\r\n\r\nuntil close")
            return False
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await w.drain()
        return not head.startswith(b"GET /then-hangup")  # keep-alive promised, then the server closes anyway

    async def test() -> None:
        server, base, conns = await _serve(handler)
        async with server, _client() as client:
            assert (await client.get(f"{base}/close")).text == "until close"
            assert (await client.get(f"{base}/then-hangup")).text == "ok"
            await asyncio.sleep(0.05)
            assert (await client.get(f"{base}/again")).text == "ok"  # the pooled one was closed: a fresh one
        assert len(conns) == 3

    _run(test)


def test_streamed_request_bodies_are_chunked_and_100_continue_is_skipped() -> None:
    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        out = str(len(body)).encode() + b":" + body[:3]
        w.write(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: %d\r\n\r\n%b" % (len(out), out))
        await w.drain()
        return True

    async def parts() -> AsyncIterator[bytes]:
        for i in range(50):
            yield bytes([65 + i % 26]) * 1000

    async def test() -> None:
        server, base, _ = await _serve(handler)
        async with server, _client() as client:
            r = await client.put(f"{base}/upload", content=parts())
            small = await client.put(f"{base}/bytes", content=b"xyz")
        assert (r.status_code, r.text) == (201, "50000:AAA")
        assert small.text == "3:xyz"

    _run(test)


@pytest.mark.parametrize("answer", [b"HTTP/1.1 abc Nope\r\n\r\n", b"SIP/2.0 200 OK\r\n\r\n",
                                    b"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n",
                                    b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70000 + b"\r\n\r\n",
                                    b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
                                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"])
def test_malformed_responses_are_protocol_errors(answer: bytes) -> None:
    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        w.write(answer)
        await w.drain()
        return False

    async def test() -> None:
        server, base, _ = await _serve(handler)
        async with server, _client() as client:
            with pytest.raises(httpx.RemoteProtocolError):
                await client.get(f"{base}/x")

    _run(test)


def test_a_silent_upstream_is_a_read_timeout_and_a_closed_port_a_connect_error() -> None:
    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(5)
        return False

    async def test() -> None:
        server, base, _ = await _serve(handler)
        async with server, _client(timeout=0.3) as client:
            loop = asyncio.get_running_loop()
            started = loop.time()
            with pytest.raises(httpx.ReadTimeout):
                await client.get(f"{base}/x")
            assert loop.time() - started < 2.0
        async with _client() as client:
            with pytest.raises(httpx.ConnectError):
                await client.get(base + "/x")  # the server is closed now

    _run(test)


def test_cookies_set_by_the_upstream_are_never_replayed_on_later_requests() -> None:
    seen: list[bytes] = []

    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        seen.append(head)
        w.write(b"HTTP/1.1 200 OK\r\nSet-Cookie: session=alice; Path=/\r\nContent-Length: 0\r\n\r\n")
        await w.drain()
        return True

    async def test() -> None:
        server, base, _ = await _serve(handler)
        async with server, _client() as client:
            first = await client.get(f"{base}/a")
            await client.get(f"{base}/b")
        assert first.headers["set-cookie"].startswith("session=alice")  # passed on to the one client it was for
        assert b"cookie:" not in seen[1].lower()  # ...and not sent on behalf of the next

    _run(test)
