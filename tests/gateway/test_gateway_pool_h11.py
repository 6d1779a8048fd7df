"""The h11-framed upstream transport: a pooled connection the upstream closes while the request is on its way
is retried on a fresh one (when the body can be resent), and a response's framing decides reuse."""

from __future__ import annotations

import asyncio

from .test_gateway_pool import _client, _run, _serve


def test_a_pooled_connection_closed_unanswered_is_retried_once_on_a_fresh_one() -> None:
    served: dict[int, int] = {}

    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        n = served[id(w)] = served.get(id(w), 0) + 1
        if len(served) == 1 and n == 2:
            return False  # the second request on the first connection: closed without a byte of answer
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await w.drain()
        return True

    async def test() -> None:
        server, base, conns = await _serve(handler)
        async with server, _client() as client:
            assert (await client.get(f"{base}/one")).text == "ok"
            assert (await client.put(f"{base}/two", content=b"body")).text == "ok"  # resendable: retried
        assert len(conns) == 2

    _run(test)


def test_connection_close_and_http10_answers_are_not_reused() -> None:
    async def handler(head: bytes, body: bytes, w: asyncio.StreamWriter) -> bool:
        if head.startswith(b"GET /ten"):
            w.write(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
        else:
            w.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
        await w.drain()
        return True  # the server would go on: the client must not

    async def test() -> None:
        server, base, conns = await _serve(handler)
        async with server, _client() as client:
            for path in ("/ten", "/close", "/ten"):
                assert (await client.get(base + path)).text == "ok"
        assert len(conns) == 3

    _run(test)
