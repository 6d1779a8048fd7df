"""Serving the gateway: uvicorn in the foreground with signal handling and graceful shutdown, or in a thread.

The connection layer (receipt deadline, idle timeouts, connection limit, lingering close) is
:mod:`acx_oci.gateway.limits`; manifest bodies are capped by :mod:`acx_oci.gateway.bodies`; TLS on the
listener is :mod:`acx_oci.gateway.tls`; ``/metrics`` (outermost, so every answer is counted) is
:mod:`acx_oci.gateway.metrics`.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from acx_oci.gateway.access import AccessLog, configure_access_log
from acx_oci.gateway.app import Gateway, create_app
from acx_oci.gateway.bodies import ManifestBodyLimit
from acx_oci.gateway.config import GatewayConfig, parse_listen
from acx_oci.gateway.limits import ConnectionGuard, ServerLimits, connection_budget, protocol_class, raise_nofile_limit
from acx_oci.gateway.metrics import GatewayMetrics, MetricsApp
from acx_oci.gateway.tls import handshake_seconds


class _Server(uvicorn.Server):
    """uvicorn's server, but a SIGTERM/SIGINT that ended in a graceful shutdown exits 0.

    (uvicorn re-raises the signal after shutting down, so the process would
    die "by signal" even though every in-flight request was completed.) Over TLS, the handshake is bounded
    by :func:`acx_oci.gateway.tls.handshake_seconds` instead of asyncio's 60 s.
    """

    handshake_timeout: float = 10.0

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's startup, with the TLS handshake timeout added to the listeners it creates (uvicorn has no
        option for it; the loop's method is shadowed for the duration of this call only)."""
        loop = asyncio.get_running_loop()
        create_server = loop.create_server

        async def bounded(*args: Any, **kwargs: Any) -> asyncio.Server:
            if kwargs.get("ssl") is not None:
                kwargs.setdefault("ssl_handshake_timeout", self.handshake_timeout)
            return await create_server(*args, **kwargs)

        loop.create_server = bounded  # type: ignore[method-assign]
        try:
            await super().startup(sockets)
        finally:
            del loop.create_server

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def _bounded_app(config: GatewayConfig, guard: ConnectionGuard) -> tuple[ASGIApp, Gateway, GatewayMetrics]:
    """The gateway's app with manifest bodies capped (inside the access log, so a 413 or 408 is logged too),
    and the metrics outside everything (so those are counted too)."""
    app, gw = create_app(config)
    seconds = config.manifest_body_seconds
    if isinstance(app, AccessLog):
        app.app = ManifestBodyLimit(app.app, deadline_seconds=seconds)
    else:
        app = ManifestBodyLimit(app, deadline_seconds=seconds)
    metrics = GatewayMetrics(gw, guard)
    return MetricsApp(app, metrics), gw, metrics


def _uvicorn_server(app: ASGIApp, limits: ServerLimits, guard: ConnectionGuard, tls: ssl.SSLContext | None,
                    **kw: object) -> _Server:
    """uvicorn configured for the gateway; a TLS context replaces the one uvicorn would build from file names
    (ours is built and checked by :mod:`acx_oci.gateway.tls` before anything binds)."""
    cfg = uvicorn.Config(app, http=protocol_class(limits, guard), log_level="warning", access_log=False,
                         lifespan="on", proxy_headers=False, server_header=False,
                         backlog=min(4096, guard.max_connections), **kw)  # type: ignore[arg-type]
    if tls is not None:
        cfg.load()
        cfg.ssl = tls
    server = _Server(cfg)
    server.handshake_timeout = handshake_seconds(limits.header_seconds)
    return server


def serve(config: GatewayConfig, listen: str, graceful_seconds: float = 30.0,
          limits: ServerLimits | None = None, tls: ssl.SSLContext | None = None) -> None:
    """Run until SIGINT/SIGTERM: stop accepting, give in-flight requests ``graceful_seconds``, close upstream pools."""
    host, port = parse_listen(listen)
    limits = limits or ServerLimits()
    guard = ConnectionGuard(connection_budget(limits, raise_nofile_limit()))
    configure_access_log()
    app, _, _ = _bounded_app(config, guard)
    _uvicorn_server(app, limits, guard, tls, host=host, port=port,
                    timeout_graceful_shutdown=int(graceful_seconds)).run()


@dataclass
class RunningGateway:
    """A gateway served from a background thread (tests, benchmarks)."""

    server: uvicorn.Server
    thread: threading.Thread
    host: str
    port: int
    gateway: Gateway
    guard: ConnectionGuard
    metrics: GatewayMetrics
    scheme: str = "http"

    @property
    def address(self) -> str:
        """``HOST:PORT``, as registry clients take it."""
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """``http(s)://HOST:PORT``."""
        return f"{self.scheme}://{self.address}"

    def stop(self) -> None:
        """Stop serving and wait (bounded) for the thread: in-flight requests finish first."""
        self.server.should_exit = True
        self.thread.join(timeout=15)


def start_in_thread(config: GatewayConfig, host: str = "127.0.0.1", port: int = 0, timeout: float = 10.0,
                    limits: ServerLimits | None = None, tls: ssl.SSLContext | None = None) -> RunningGateway:
    """Bind (port 0 = ephemeral), serve in a daemon thread, return once it accepts connections."""
    limits = limits or ServerLimits()
    guard = ConnectionGuard(connection_budget(limits, raise_nofile_limit()))
    app, gw, metrics = _bounded_app(config, guard)
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY on accepted sockets only when the listening socket's
    # proto says TCP, and without it a response written as headers + body waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    server = _uvicorn_server(app, limits, guard, tls)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="acx-gateway")
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("gateway did not start")
        time.sleep(0.01)
    return RunningGateway(server, thread, host, sock.getsockname()[1], gw, guard, metrics,
                          "https" if tls is not None else "http")
