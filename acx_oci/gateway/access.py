"""The access log: one JSON line per request on the ``acx_oci.gateway.access`` logger."""

from __future__ import annotations

import json
import logging
import sys
import time
from datetime import UTC, datetime
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

access_log = logging.getLogger("acx_oci.gateway.access")


class AccessLog:
    """ASGI middleware: one JSON line per request (method, path, status, ms, bytes, decision, cache)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        state: dict[str, Any] = scope.setdefault("state", {})
        status = 0
        sent = 0

        async def wrapped(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, wrapped)
        finally:
            client = scope.get("client")
            record = {
                "ts": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "remote": f"{client[0]}:{client[1]}" if client else None,
                # the raw path as sent (what the router judged), so an encoded or dotted attempt shows as such
                "method": scope.get("method"), "path": _raw_path(scope),
                "query": scope.get("query_string", b"").decode("latin-1") or None,
                "status": status, "bytes": sent, "ms": round((time.monotonic() - started) * 1000, 2),
            }
            for k in ("decision", "cache", "referrers_source", "index_error"):
                if k in state:
                    record[k] = state[k]
            access_log.info(json.dumps(record, separators=(",", ":")))


def _raw_path(scope: Scope) -> str | None:
    raw = scope.get("raw_path")
    if isinstance(raw, bytes | bytearray):
        return bytes(raw).split(b"?", 1)[0].decode("latin-1")[:2048]
    path = scope.get("path")
    return str(path) if path is not None else None


def configure_access_log(stream: Any = None) -> None:
    """JSON lines on stderr (the message is already JSON)."""
    if access_log.handlers:
        return
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    access_log.addHandler(handler)
    access_log.setLevel(logging.INFO)
    access_log.propagate = False
