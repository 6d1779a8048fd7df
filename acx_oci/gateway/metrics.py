"""The gateway's Prometheus metrics, served at ``GET /metrics`` on its listen address.

Every gateway has its own :class:`prometheus_client.CollectorRegistry` (never the process-global one), so
several gateways in one process — tests, benchmarks — count apart. ``/metrics`` cannot be mistaken for a
registry path: the distribution API lives entirely under ``/v2/``, and only the exact path ``/metrics`` is
answered here (``/v2/metrics/...`` is a repository called ``metrics``, proxied like any other).

What is exported reveals no secret and no names: no repository, digest, client address, credential or
upstream URL is a label, only counts by fixed small sets of values (method, outcome, reason code):

* ``acx_gateway_requests_total{method,outcome}`` — outcome is the gateway's decision (``allowed``,
  ``denied``, ``refused``, ``verified``, ``error``), ``proxied`` when it decided nothing, ``internal`` for
  its own endpoints;
* ``acx_gateway_denials_total{reason}`` — each reason code a denial names (a cartridge denied for two unmet
  requirements counts under both), read from the ``DENIED`` body the client was sent;
* ``acx_gateway_verdict_cache_hits_total{kind}`` (``fresh``, ``revalidated``) and
  ``acx_gateway_verdict_evaluations_total`` (misses), ``acx_gateway_cached_verdicts``;
* ``acx_gateway_upstream_seconds`` — a histogram of proxied upstream requests, send to response head;
* ``acx_gateway_open_connections``, ``acx_gateway_connections_dropped_total`` (the connection guard).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from typing import Any

import httpx
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from acx_oci.gateway.app import Gateway
from acx_oci.gateway.limits import ConnectionGuard
from acx_oci.gateway.proxy import DENIED_HEADER

METRICS_PATH = b"/metrics"
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_REASON = re.compile(r"[a-z][a-z0-9_]{0,47}")
_DENIED = DENIED_HEADER.encode("ascii")
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_STARTED = "acx_started"


class _StateCollector(Collector):
    """Read at scrape time from the gateway's own counters and its connection guard (nothing double-kept)."""

    def __init__(self, gw: Gateway, guard: ConnectionGuard | None) -> None:
        self._gw, self._guard = gw, guard

    def collect(self) -> Iterable[Metric]:
        """The current values (prometheus-client calls this on every scrape)."""
        stats = self._gw.stats
        hits = CounterMetricFamily("acx_gateway_verdict_cache_hits", "Verdicts answered from the cache.",
                                   labels=["kind"])
        hits.add_metric(["fresh"], stats.get("fresh_hits", 0))
        hits.add_metric(["revalidated"], stats.get("revalidations", 0))
        yield hits
        yield CounterMetricFamily("acx_gateway_verdict_evaluations", "Verdicts computed (cache misses).",
                                  value=stats.get("evaluations", 0))
        yield GaugeMetricFamily("acx_gateway_cached_verdicts", "Verdicts in the cache.", value=len(self._gw.cache))
        if self._guard is not None:
            yield GaugeMetricFamily("acx_gateway_open_connections", "Client connections open.",
                                    value=self._guard.open)
            yield CounterMetricFamily("acx_gateway_connections_dropped", "Client connections dropped by the limit.",
                                      value=self._guard.dropped)


class GatewayMetrics:
    """One gateway's metrics (see the module docstring)."""

    def __init__(self, gw: Gateway, guard: ConnectionGuard | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("acx_gateway_requests", "Requests answered, by method and the gateway's outcome.",
                                ["method", "outcome"], registry=self.registry)
        self.denials = Counter("acx_gateway_denials", "Policy denials, by each reason code the denial names.",
                               ["reason"], registry=self.registry)
        self.upstream = Histogram("acx_gateway_upstream_seconds", "Proxied upstream requests: send to response head.",
                                  buckets=_BUCKETS, registry=self.registry)
        self.registry.register(_StateCollector(gw, guard))
        self.gateway = gw

    def render(self) -> bytes:
        """The Prometheus text exposition of this gateway's registry."""
        return generate_latest(self.registry)

    def instrument(self, client: httpx.AsyncClient) -> None:
        """Time the upstream client's requests with httpx's own event hooks (the transport stays metrics-free)."""

        async def started(request: httpx.Request) -> None:
            request.extensions[_STARTED] = time.perf_counter()

        async def answered(response: httpx.Response) -> None:
            t0 = response.request.extensions.get(_STARTED)
            if isinstance(t0, float):
                self.upstream.observe(time.perf_counter() - t0)

        hooks = client.event_hooks
        client.event_hooks = {"request": [*hooks["request"], started], "response": [*hooks["response"], answered]}

    def count_denial(self, body: bytes) -> None:
        """Count a ``DENIED`` answer under each reason code its detail names (``unspecified`` if none)."""
        try:
            detail = json.loads(body)["errors"][0].get("detail") or {}
        except (ValueError, LookupError, TypeError, AttributeError):
            detail = {}
        codes = _codes(detail) if isinstance(detail, dict) else []
        for code in dict.fromkeys(c if _REASON.fullmatch(c) else "other" for c in codes) or ("unspecified",):
            self.denials.labels(code).inc()


def _codes(detail: dict[str, Any]) -> list[str]:
    codes = [c for c in detail.get("codes") or [] if isinstance(c, str)]
    for unmet in detail.get("unmet") or []:
        if isinstance(unmet, dict):
            codes += [c for c in unmet.get("codes") or [] if isinstance(c, str)]
    return codes


class MetricsApp:
    """ASGI middleware outermost around the gateway: answers ``GET /metrics``, counts every other request when
    its answer is done, and instruments the upstream client once the app's lifespan has started it."""

    def __init__(self, app: ASGIApp, metrics: GatewayMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, self._lifespan_send(send))
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "")
        label = method if method in _METHODS else "OTHER"
        if scope.get("path") == "/metrics" and _raw(scope) == METRICS_PATH:
            await self._serve(method, send)
            self.metrics.requests.labels(label, "internal").inc()
            return
        state: dict[str, Any] = scope.setdefault("state", {})
        denial: bytearray | None = None

        async def counted(message: Message) -> None:
            nonlocal denial
            if message["type"] == "http.response.start":
                if any(k.lower() == _DENIED for k, _ in message.get("headers", ())):
                    denial = bytearray()
            elif message["type"] == "http.response.body" and denial is not None and len(denial) < 1 << 20:
                denial += message.get("body", b"")
            await send(message)

        outcome = "error"
        try:
            await self.app(scope, receive, counted)
            outcome = str(state.get("decision") or ("internal" if _raw(scope) in _OWN else "proxied"))
        finally:
            self.metrics.requests.labels(label, outcome).inc()
            if denial is not None:
                self.metrics.count_denial(bytes(denial))

    def _lifespan_send(self, send: Send) -> Send:
        async def wrapped(message: Message) -> None:
            if message["type"] == "lifespan.startup.complete":
                self.metrics.instrument(self.metrics.gateway.client)
            await send(message)
        return wrapped

    @staticmethod
    def _metrics_response(method: str, body: bytes) -> tuple[int, bytes]:
        return (200, body) if method in ("GET", "HEAD") else (405, b"only GET /metrics\n")

    async def _serve(self, method: str, send: Send) -> None:
        status, body = self._metrics_response(method, self.metrics.render())
        ctype = CONTENT_TYPE_LATEST if status == 200 else "text/plain; charset=utf-8"
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", ctype.encode("ascii")),
                                (b"content-length", str(len(body)).encode("ascii")),
                                (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body if method != "HEAD" else b""})


_OWN = frozenset({b"/healthz", b"/readyz"})


def _raw(scope: Scope) -> bytes:
    raw = scope.get("raw_path")
    return bytes(raw).split(b"?", 1)[0] if isinstance(raw, bytes | bytearray) else b""
