"""The proxying half of the gateway: one upstream HTTP client, header filtering, streaming both ways.

Everything here is policy-free; :mod:`acx_oci.gateway.app` decides *whether* to
forward, this module forwards. Requests go to exactly the path and query the
router matched (:mod:`acx_oci.gateway.paths`), never to a re-normalised URL.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from acx_oci.errors import RegistryError
from acx_oci.gateway.config import GatewayConfig
from acx_oci.gateway.pool import NoCookieJar, UpstreamTransport, relay_small
from acx_oci.net import client_context

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
                        "trailer", "trailers", "transfer-encoding", "upgrade", "host"})
# Set by the gateway's own HTTP server on every answer: the upstream's copy would make a second one.
SERVER_SET = frozenset({"date"})
# Set on every policy denial the gateway itself answers, so a client can tell "the gateway's policy said no"
# (exit 1, the reason shown) from a registry refusing its credentials (exit 3); HEAD answers have no body.
DENIED_HEADER = "acx-gateway-denied"


def oci_error(status: int, code: str, message: str, detail: Any = None,
              headers: dict[str, str] | None = None) -> JSONResponse:
    """An OCI distribution error body: ``{"errors":[{"code","message","detail"}]}``."""
    err: dict[str, Any] = {"code": code, "message": message}
    if detail is not None:
        err["detail"] = detail
    return JSONResponse({"errors": [err]}, status_code=status, headers=headers)


def denied(message: str, detail: Any = None) -> JSONResponse:
    """``403 DENIED`` from the gateway's own policy (marked so clients tell it from an auth refusal)."""
    # A header value is visible ASCII with no whitespace at either end (h11 refuses anything else, and then the
    # client gets a dropped connection instead of the denial): control characters out, cut, then stripped.
    printable = "".join(c if " " <= c <= "~" else "?" for c in message.replace("\t", " ").replace("\n", " "))
    shown = " ".join(printable.split())[:400].strip()
    return oci_error(403, "DENIED", message, detail, headers={DENIED_HEADER: shown or "denied"})


class _Streamed(StreamingResponse):
    """A streamed upstream body whose upstream connection goes back to the pool when the response ends, however it
    ends. A client gone mid-body (or cut by the gateway) makes Starlette cancel the stream while the body iterator
    sits at a ``yield``: the iterator's own ``finally`` then runs only when the garbage collector gets to it, and
    until then the response holds one of the pool's connections (two hundred such and the pool is dry)."""

    upstream: httpx.Response

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self.upstream.aclose()


class Proxy:
    """The upstream client and the forwarding plumbing the gateway's handlers share."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self.origin = config.upstream_origin
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        """The upstream client, opened by the app's lifespan; a RuntimeError before it starts or after it ends."""
        if self._client is None:
            raise RuntimeError("gateway not started (lifespan)")
        return self._client

    @contextlib.asynccontextmanager
    async def client_lifespan(self, app: Starlette) -> AsyncIterator[None]:
        """The one upstream client for the app's life: redirects not followed, no cookies, our own transport."""
        ctx = client_context(self.config.upstream_host, insecure=self.config.insecure, ca_file=self.config.ca_file)
        self._client = httpx.AsyncClient(
            verify=ctx or not self.config.insecure, follow_redirects=False,
            timeout=httpx.Timeout(self.config.timeout, connect=min(self.config.timeout, 5.0)),
            transport=UpstreamTransport(verify=not self.config.insecure, timeout=self.config.timeout,
                                        connect_timeout=min(self.config.timeout, 5.0), ssl_context=ctx),
            cookies=NoCookieJar(),
        )
        try:
            yield
        finally:
            await self._client.aclose()
            self._client = None

    def _forward_headers(self, request: Request, drop: tuple[str, ...] = (),
                         body: bool = False) -> list[tuple[bytes, bytes]]:
        """The client's end-to-end headers. ``Content-Length`` is framing, so it is the gateway's to set: kept
        only for a body forwarded as the client framed it by length alone (the server read exactly that many
        bytes). Forwarded otherwise — a GET whose body is not sent on, or ``Transfer-Encoding: chunked`` *and*
        a ``Content-Length`` (the body is read chunked) — the upstream would take the wrong number of bytes as
        the body and read the rest as the next request on the pooled connection: request smuggling.
        Values go on as the bytes received (obs-text such as a UTF-8 ``User-Agent`` is legal HTTP; re-encoding
        it as text would fail)."""
        out = [(k, v) for k, v in request.headers.raw
               if (lk := k.decode("latin-1").lower()) not in HOP_BY_HOP and lk not in drop and lk != "content-length"]
        lengths = request.headers.getlist("content-length")
        if body and len(lengths) == 1 and lengths[0].isdigit() and "transfer-encoding" not in request.headers:
            out.append((b"content-length", str(int(lengths[0])).encode("ascii")))
        return out

    def _rewrite(self, value: str, request: Request) -> str:
        """Upstream absolute URLs in Location/Link become gateway URLs (relative ones stay)."""
        if self.origin in value:
            mine = f"{request.url.scheme}://{request.headers.get('host', request.url.netloc)}"
            return value.replace(self.origin, mine)
        return value

    def _response_headers(self, resp: httpx.Response, request: Request,
                          drop: tuple[str, ...] = ()) -> list[tuple[bytes, bytes]]:
        out = []
        for k, v in resp.headers.multi_items():
            lk = k.lower()
            if lk in HOP_BY_HOP or lk in SERVER_SET or lk in drop or lk == DENIED_HEADER:
                continue
            if lk in ("location", "link"):
                v = self._rewrite(v, request)
            out.append((lk.encode("latin-1"), v.encode("latin-1", "replace")))
        return out

    async def _send(self, request: Request, target: str, *, content: Any = None, drop: tuple[str, ...] = (),
                    method: str | None = None, extra: dict[str, str] | None = None) -> httpx.Response:
        """Forward to ``origin + target`` (a path and query the router validated, sent as is)."""
        headers = self._forward_headers(request, (*drop, *(k.lower() for k in extra or {})),
                                        body=content is not None and not isinstance(content, bytes))
        headers += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (extra or {}).items()]
        req = self.client.build_request(method or request.method, self.origin + target, headers=headers,
                                        content=content)
        try:
            return await self.client.send(req, stream=True)
        except httpx.TimeoutException:
            raise RegistryError(f"upstream {self.config.upstream_host}: no answer within {self.config.timeout:g}s") \
                from None
        except httpx.HTTPError as exc:
            raise RegistryError(f"upstream {self.config.upstream_host} unreachable ({type(exc).__name__})") from None

    def _stream_back(self, resp: httpx.Response, request: Request) -> Response:
        small = relay_small(resp, self._response_headers(resp, request))
        if small is not None:
            return small

        async def body() -> AsyncIterator[bytes]:
            try:
                async for chunk in resp.aiter_raw():
                    yield chunk
            finally:
                await resp.aclose()

        out = _Streamed(body(), status_code=resp.status_code)
        out.upstream = resp
        out.raw_headers = self._response_headers(resp, request)
        return out

    @staticmethod
    async def _buffered(resp: httpx.Response, cap: int) -> bytes | None:
        """Read a body up to ``cap`` bytes; None (and closed) if it is larger."""
        buf = bytearray()
        try:
            async for chunk in resp.aiter_raw():
                buf += chunk
                if len(buf) > cap:
                    return None
        finally:
            await resp.aclose()
        return bytes(buf)

    @staticmethod
    def _with_headers(response: Response, headers: list[tuple[bytes, bytes]]) -> Response:
        response.raw_headers = headers
        return response
