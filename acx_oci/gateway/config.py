"""Gateway configuration: what ``acx-oci gateway`` was told (upstream, policy, trust, timings) and ``--listen``.

The policy and trust objects are loaded by the CLI (``load_policy`` / ``load_trust``) and handed in already parsed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from acx_oci.errors import UsageError
from acx_oci.evaluation import Policy
from acx_oci.trust import Trust


def utcnow() -> datetime:
    """The default ``GatewayConfig.clock`` (timezone-aware UTC); tests pass their own to move time."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class GatewayConfig:
    """Everything the gateway needs; the clock is injectable so tests can move time."""

    upstream: str
    policy: Policy
    trust: Trust
    timeout: float = 30.0
    insecure: bool = False
    # a PEM bundle the upstream's certificate is verified with (None: its certs.d entry, else the system store)
    ca_file: str | None = None
    fresh_seconds: float = 2.0
    max_age_seconds: float = 300.0
    max_referrers: int = 1000
    # Re-derive deciding credentials (pulls) and pushed attestations from their game records; off is weaker.
    replay: bool = True
    log: bool = True  # check credentials against the logs the trust file pins (off: --no-log, weaker)
    clock: Callable[[], datetime] = field(default=utcnow)
    # a manifest PUT's whole body must arrive within this many seconds of its headers (else 408): the server's
    # body timeout is per read, and a byte every few seconds would otherwise hold the request open for ever
    manifest_body_seconds: float = 30.0
    # threads for the heavy upstream work (evaluations, pushed-attestation checks, tag walks, referrer listings):
    # a flood of cache misses queues here and leaves anyio's other 32+ threads to revalidate cached verdicts
    evaluation_threads: int = 8
    # where the gateway remembers status-list sequences (None: $ACX_OCI_CACHE_DIR, else the user cache dir)
    status_cache_dir: Path | None = None

    @property
    def upstream_origin(self) -> str:
        """``scheme://host[:port]`` of ``--upstream`` (any path dropped); a UsageError unless it is http(s)."""
        parts = urlsplit(self.upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise UsageError(f"--upstream {self.upstream!r}: expected http(s)://HOST[:PORT]")
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def upstream_host(self) -> str:
        """``host[:port]`` of ``--upstream``: what the gateway's own reads address and its errors name (any
        ``user:pass@`` dropped, so no error message or log line carries a credential)."""
        return urlsplit(self.upstream).netloc.rpartition("@")[2]


def parse_listen(listen: str) -> tuple[str, int]:
    """``--listen HOST:PORT`` (``[::1]:PORT`` for IPv6) as (host, port); else a UsageError, before anything starts."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not host or not 0 <= int(port) <= 65535:
        raise UsageError(f"--listen {listen!r}: expected HOST:PORT with a port from 0 to 65535")
    return host.strip("[]"), int(port)
