"""The model proxy the containment probes talk to: a real :class:`~acx_oci.egress.proxy.ModelProxy` whose
upstream is a verifier-run loopback stand-in, never the provider.

Why a stand-in and not a replay with an empty recording: a replaying proxy never reaches its forwarding
code (key injection, the upstream request), so a probe run against it would prove nothing about the path a
game takes. The stand-in keeps that path whole — the proxy injects the verifier's real key and sends the
request — while nothing that could bill the key ever sees it: the stand-in reads the request, notes what
arrived (path, model, whether the verifier's key was injected; never the key itself) and answers
``409 probe_upstream``. It is also an independent witness: a forbidden request that the proxy *forwarded*
shows up here, not only in the proxy's own record. (An unreachable upstream would keep the path whole too,
but a forwarded request would then only show up as an upstream failure, with nothing outside the proxy
to say what was sent.) The key travels over loopback to this in-process server, and nowhere else.
"""

from __future__ import annotations

import dataclasses
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from acx_oci import reasons
from acx_oci.egress.proxy import ModelProxy
from acx_oci.egress.recording import ModelRun
from acx_oci.model import modelapi as ma

PROBE_UPSTREAM_CODE = reasons.PROBE_UPSTREAM
PROBE_REQUEST_SECONDS = 10.0
_MAX_BODY = 1024 * 1024
_MAX_SEEN = 64


class ProbeUpstream:
    """A loopback HTTP server standing in for the provider during the probes; see the module docstring.

    ``seen`` lists one dict per request that arrived: ``method``, ``path``, ``model`` (the body's, if any)
    and ``keyInjected`` (the API's key header carried exactly the verifier's key).
    """

    def __init__(self, api: ma.Api, key: str | None) -> None:
        self.api = api
        self._expected = (api.key_prefix + key) if key else None
        self.seen: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="acx-probe-upstream", daemon=True)

    @property
    def url(self) -> str:
        """The ``baseUrl`` (``http://127.0.0.1:PORT/v1``) the probe proxy forwards to."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> ProbeUpstream:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> list[dict[str, Any]]:
        """Stop serving; what arrived."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        with self._lock:
            return list(self.seen)

    def _note(self, method: str, path: str, headers: Any, body: bytes) -> None:
        try:
            doc = json.loads(body) if body else None
        except (ValueError, UnicodeDecodeError):
            doc = None
        model = doc.get("model") if isinstance(doc, dict) and isinstance(doc.get("model"), str) else None
        given = str(headers.get(self.api.key_header) or "")
        injected = self._expected is not None and hmac.compare_digest(given.encode(), self._expected.encode())
        with self._lock:
            if len(self.seen) < _MAX_SEEN:
                self.seen.append({"method": method, "path": path, "model": model, "keyInjected": injected})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                try:
                    length = min(int(self.headers.get("content-length") or 0), _MAX_BODY)
                except ValueError:
                    length = 0
                body = self.rfile.read(length) if length > 0 else b""
                upstream._note(self.command, self.path, self.headers, body)
                answer = json.dumps({"error": {"type": "acx_probe", "code": PROBE_UPSTREAM_CODE,
                                               "message": "containment probe: the provider is never called"}})
                data = answer.encode()
                self.send_response(409)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

            do_POST = do_GET = do_PUT = do_DELETE = do_PATCH = _any

            def log_message(self, format: str, *args: Any) -> None:
                """Silent: nothing the probes send is logged."""

        return Handler


def probe_entry(entry: ma.ModelEntry, upstream_url: str) -> ma.ModelEntry:
    """The games' model entry with its upstream replaced by the stand-in, budgets lifted (the probes send a
    fixed handful of requests, and a tiny ``maxRequestsPerGame`` must not turn the control into a 429)."""
    return dataclasses.replace(entry, base_url=upstream_url, max_requests_per_game=None, max_tokens_per_game=None)


class ProbeEgress:
    """A probe proxy on ``socket_path`` — a real :class:`ModelProxy`, exactly as a game's, the real key
    injected — in front of a :class:`ProbeUpstream`. Use as a context manager; after it exits, ``run`` is the
    proxy's record and transcript and ``upstream_saw`` what reached the stand-in."""

    def __init__(self, entry: ma.ModelEntry, key: str | None, socket_path: Path,
                 owner: tuple[int, int] | None) -> None:
        self.entry, self._key, self.socket_path, self.owner = entry, key, socket_path, owner
        self.run: ModelRun | None = None
        self.upstream_saw: list[dict[str, Any]] = []

    def __enter__(self) -> ProbeEgress:
        upstream = ProbeUpstream(ma.APIS[self.entry.api], self._key).start()
        try:
            proxy = ModelProxy(probe_entry(self.entry, upstream.url), self._key, self.socket_path,
                               owner=self.owner, request_seconds=PROBE_REQUEST_SECONDS).start()
        except BaseException:
            upstream.stop()
            raise
        self._upstream, self._proxy = upstream, proxy
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.run = self._proxy.stop()
        finally:
            self.upstream_saw = self._upstream.stop()
