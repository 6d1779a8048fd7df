"""A threaded stdlib HTTP server for hand-written fake registries, quiet about clients that hang up.

socketserver prints a client's reset (a guard cutting a request, a client reading only the head) to stderr,
and the CLI runner captures stderr as the command's output: a ``--json`` answer then fails to parse.
"""

from __future__ import annotations

from http.server import ThreadingHTTPServer


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass
