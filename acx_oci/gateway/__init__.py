"""A policy-enforcing OCI registry gateway that also serves the Referrers API (``acx-oci gateway``).

The package is split by concern; this module re-exports the names callers use:

* :mod:`~acx_oci.gateway.config` — :class:`GatewayConfig`, :func:`parse_listen`
* :mod:`~acx_oci.gateway.cache` — :class:`VerdictCache` (the only state; how verdicts are revalidated)
* :mod:`~acx_oci.gateway.upstream` — :class:`Upstream`, the gateway's own registry reads and writes
* :mod:`~acx_oci.gateway.app` — :class:`Gateway` (routes and handlers), :func:`create_app`
* :mod:`~acx_oci.gateway.paths` — the router: one parse of the raw path, checked once, forwarded as matched
* :mod:`~acx_oci.gateway.blobs` — :class:`BlobLedger` (which blobs a covered repository may serve, and why)
* :mod:`~acx_oci.gateway.proxy` — forwarding plumbing and the OCI error bodies
* :mod:`~acx_oci.gateway.access` — the JSON-lines access log (logger ``acx_oci.gateway.access``)
* :mod:`~acx_oci.gateway.server` — :func:`serve` (signals, graceful shutdown), :func:`start_in_thread`
* :mod:`~acx_oci.gateway.limits` — :class:`ServerLimits`: receipt deadline, idle timeouts, connection limit
* :mod:`~acx_oci.gateway.bodies` — the 4 MiB manifest body cap; :mod:`~acx_oci.gateway.pool` — the upstream transport
* :mod:`~acx_oci.gateway.tls` — TLS and mutual TLS on the listener; :mod:`~acx_oci.gateway.metrics` — ``/metrics``

Example::

    from acx_oci.evaluation import load_policy
    from acx_oci.gateway import GatewayConfig, start_in_thread
    from acx_oci.trust import load_trust

    config = GatewayConfig(upstream="https://registry.example", policy=load_policy("policy.yaml"),
                           trust=load_trust("trust.yaml"))
    running = start_in_thread(config)
    print(running.url)  # pull through it; running.stop() when done
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.errors import PolicyUnreadable
    from acx_oci.gateway.access import AccessLog, configure_access_log
    from acx_oci.gateway.app import Gateway, create_app
    from acx_oci.gateway.cache import VerdictCache
    from acx_oci.gateway.config import GatewayConfig, parse_listen, utcnow
    from acx_oci.gateway.limits import ServerLimits
    from acx_oci.gateway.proxy import oci_error
    from acx_oci.gateway.server import RunningGateway, serve, start_in_thread
    from acx_oci.gateway.tls import check_options, server_context
    from acx_oci.gateway.upstream import Upstream
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "acx_oci.errors": ("PolicyUnreadable",),
        "access": ("AccessLog", "configure_access_log"),
        "app": ("Gateway", "create_app"),
        "cache": ("VerdictCache",),
        "config": ("GatewayConfig", "parse_listen", "utcnow"),
        "limits": ("ServerLimits",),
        "proxy": ("oci_error",),
        "server": ("RunningGateway", "serve", "start_in_thread"),
        "tls": ("check_options", "server_context"),
        "upstream": ("Upstream",),
    })

__all__ = ["AccessLog", "Gateway", "GatewayConfig", "PolicyUnreadable", "RunningGateway", "ServerLimits", "Upstream",
           "VerdictCache", "check_options", "configure_access_log", "create_app", "oci_error", "parse_listen", "serve",
           "server_context", "start_in_thread", "utcnow"]
