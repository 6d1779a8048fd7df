"""Bounded request bodies: a manifest PUT is read to at most 4 MiB + 1 byte, then answered 413.

The handlers buffer a manifest (they must verify it before the upstream sees it), so an unbounded one is
unbounded memory: :class:`ManifestBodyLimit` reads the body itself, up to the cap, and hands the handlers
the bytes only when they fit. A declared ``Content-Length`` over the cap is refused before a byte is read.
The rest of a refused body is drained (bounded) by the server's lingering close
(:mod:`acx_oci.gateway.limits`). Everything else — blob uploads above all — streams through untouched.
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from acx_oci.errors import SchemaError
from acx_oci.jsonio import loads_ijson
from acx_oci.oci.model import MAX_MANIFEST_BYTES

_MANIFEST_PUT = re.compile(r"^/v2/.+/manifests/[^/]+$")


def _too_large(found: str) -> bytes:
    return json.dumps({"errors": [{
        "code": "SIZE_INVALID",
        "message": f"manifest body too large: expected ≤ 4 MiB ({MAX_MANIFEST_BYTES} bytes), found {found}",
        "detail": {"limit": MAX_MANIFEST_BYTES},
    }]}, ensure_ascii=False).encode()


class ManifestBodyLimit:
    """ASGI middleware: manifest PUT bodies capped at ``cap`` bytes (413 SIZE_INVALID past it); a client gone
    mid-body ends its request quietly."""

    def __init__(self, app: ASGIApp, cap: int = MAX_MANIFEST_BYTES) -> None:
        self.app = app
        self.cap = cap

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
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body = message.get("body", b"")
            size += len(body)
            if size > self.cap:
                await self._refuse(send, f"more than {self.cap} bytes")
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        whole: Message | None = {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        async def replay() -> Message:
            nonlocal whole
            if whole is not None:
                message, whole = whole, None
                return message
            return await receive()

        await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(send: Send, found: str) -> None:
        body = _too_large(found)
        await send({"type": "http.response.start", "status": 413,
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
