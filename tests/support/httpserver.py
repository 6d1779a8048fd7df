"""A threaded stdlib HTTP server for hand-written fake registries, quiet about clients that hang up.

socketserver prints a client's reset (a guard cutting a request, a client reading only the head) to stderr,
and the CLI runner captures stderr as the command's output: a ``--json`` answer then fails to parse.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass


@contextlib.contextmanager
def serving_files() -> Iterator[tuple[str, dict[str, bytes]]]:
    """A loopback server of ``files`` (path -> bytes; 404 otherwise), e.g. did:web documents for
    ``--did-web-base-url``: yields (base URL, files), which the test fills as it goes."""
    files: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: Any) -> None:
            pass

    server = QuietHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", files
    finally:
        server.shutdown()
        server.server_close()
