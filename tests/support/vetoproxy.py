"""A publisher's registry that vetoes low results: a loopback proxy in front of a real Distribution registry.

It forwards every request, reads every uploaded blob, and remembers the lowest ``acx:acxLevel`` a credential
blob carried; a level-attestation manifest PUT after a blob below ``threshold`` is answered 500 and never
forwarded - what a registry the publisher runs can do to keep a bad level off the cartridge.
"""

from __future__ import annotations

import http.client
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_LEVEL = re.compile(rb'"acx:acxLevel"\s*:\s*(\d+)')
_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade"}


class VetoProxy:
    """``with VetoProxy(upstream, threshold) as p``: ``p.host`` is the registry the verifier is given."""

    def __init__(self, upstream: str, threshold: int) -> None:
        self.upstream, self.threshold = upstream, threshold
        self.levels: list[int] = []  # every acx:acxLevel seen in an uploaded blob
        self.vetoed: list[str] = []  # manifest paths answered 500
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                levels = [int(m) for m in _LEVEL.findall(body)]
                proxy.levels += levels
                if self.command == "PUT" and "/manifests/" in self.path and \
                        b"application/vnd.acx.level-attestation.v1" in body and proxy.levels and \
                        min(proxy.levels) < proxy.threshold:
                    proxy.vetoed.append(self.path)
                    self.send_response(500)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                conn = http.client.HTTPConnection(proxy.upstream, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                head = self.command == "HEAD"  # HEAD keeps upstream's Content-Length: it is the descriptor's size
                for k, v in resp.getheaders():
                    if k.lower() not in _HOP and (head or k.lower() != "content-length"):
                        self.send_header(k, v)
                if not head:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.host = f"127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True, name="vetoproxy")
        self._thread.start()

    def __enter__(self) -> VetoProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
