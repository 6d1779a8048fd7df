"""Bounded request bodies: a manifest PUT is read to at most 4 MiB + 1 byte, then answered 413, and within a
total deadline, else 408.

The handlers buffer a manifest (they must verify it before the upstream sees it), so an unbounded one is
unbounded memory: :class:`ManifestBodyLimit` reads the body itself, up to the cap, and hands the handlers
the bytes only when they fit. A declared ``Content-Length`` over the cap is refused before a byte is read.
The server's body idle timeout (:mod:`acx_oci.gateway.limits`) is per read, so a client trickling a byte
every few seconds would hold a manifest request (and its buffer) open for ever: the whole body must arrive
within ``deadline_seconds`` of the head (``GatewayConfig.manifest_body_seconds``), else ``408``. The rest of
a refused body is drained (bounded) by the server's lingering close. Everything else — blob uploads above all,
which may be large — streams through untouched, under the idle timeout only.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from acx_oci import reasons
from acx_oci.errors import SchemaError
from acx_oci.jsonio import loads_ijson
from acx_oci.oci import MAX_MANIFEST_BYTES

_MANIFEST_PUT = re.compile(r"^/v2/.+/manifests/[^/]+$")


def _too_slow(seconds: float) -> bytes:
    return json.dumps({"errors": [{
        "code": "UNSUPPORTED",
        "message": f"manifest body not received within {seconds:g} s of the request's headers; send it faster",
        "detail": {"codes": [reasons.BODY_TIMEOUT], "limitSeconds": seconds},
    }]}).encode()


def _too_large(found: str) -> bytes:
    return json.dumps({"errors": [{
        "code": "SIZE_INVALID",
        "message": f"manifest body too large: expected ≤ 4 MiB ({MAX_MANIFEST_BYTES} bytes), found {found}",
        "detail": {"limit": MAX_MANIFEST_BYTES},
    }]}, ensure_ascii=False).encode()


class ManifestBodyLimit:
    """ASGI middleware: manifest PUT bodies capped at ``cap`` bytes (413 SIZE_INVALID past it) and at
    ``deadline_seconds`` in all (408); a client gone mid-body ends its request quietly."""

    def __init__(self, app: ASGIApp, cap: int = MAX_MANIFEST_BYTES, deadline_seconds: float = 30.0) -> None:
        self.app = app
        self.cap = cap
        self.deadline_seconds = deadline_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._call(scope, receive, send)
        except ClientDisconnect:
            # the client left mid-body, or was cut by the body idle timeout: nobody to answer, and not a server
            # error (uncaught, uvicorn would log a traceback per hostile connection)
            return

    async def _call(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "PUT" or not _MANIFEST_PUT.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        declared = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if declared is not None and declared.isdigit() and int(declared) > self.cap:
            await self._refuse(send, f"Content-Length {int(declared)}")
            return
        chunks: list[bytes] = []
        try:
            async with asyncio.timeout(self.deadline_seconds):
                refused = await self._read(receive, chunks)
        except TimeoutError:
            await self._answer(send, 408, _too_slow(self.deadline_seconds))
            return
        if refused is not None:
            if refused:
                await self._refuse(send, refused)
            return
        whole: Message | None = {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        async def resend() -> Message:
            nonlocal whole
            if whole is not None:
                message, whole = whole, None
                return message
            return await receive()

        await self.app(scope, resend, send)

    async def _read(self, receive: Receive, chunks: list[bytes]) -> str | None:
        """Read the whole body into ``chunks``: None when it is in, "" when the client left, else why it is
        refused (over the cap)."""
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return ""  # the client went away
            body = message.get("body", b"")
            size += len(body)
            if size > self.cap:
                return f"more than {self.cap} bytes"
            chunks.append(body)
            if not message.get("more_body", False):
                return None

    @classmethod
    async def _refuse(cls, send: Send, found: str) -> None:
        await cls._answer(send, 413, _too_large(found))

    @staticmethod
    async def _answer(send: Send, status: int, body: bytes) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body, "more_body": False})


def read_manifest_body(body: bytes) -> tuple[Any, str | None]:
    """(the parsed manifest, None) or (None, why the upstream must not get it: 400 ``schema_invalid``).

    Two readers of the same bytes must not see two different manifests (I-JSON: a duplicate member), nor may the
    upstream store one the gateway cannot read: too deep, or text Go reads and Python refuses (bad UTF-8, a lone
    surrogate: U+FFFD to Go) — forwarded unread, a forged attestation skipped its verification. Nor one that is
    not an object with ``schemaVersion`` 2 (the only version an OCI manifest or index has; Distribution answers
    ``{}``, ``null`` or ``schemaVersion: 1`` with a 500, which the gateway relayed).
    """
    try:
        doc = loads_ijson(body)
    except SchemaError as exc:
        return None, str(exc)
    except RecursionError:
        return None, "the manifest is nested too deep to read"
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"the manifest is not JSON text the gateway can read ({str(exc)[:200]})"
    if not isinstance(doc, dict) or type(doc.get("schemaVersion")) is not int or doc["schemaVersion"] != 2:
        return None, "expected a JSON object with schemaVersion 2 (an OCI image manifest or index)"
    return doc, None
