"""Where a run's games are played: here (``local``, a pool of ``--jobs`` threads) or on a Dask cluster.

``--executor dask://HOST:PORT`` is plain TCP and is refused for anything but a loopback host unless the
verifier says ``--allow-plaintext-executor``: held-out task plaintext crosses that wire. ``dask+tls://`` uses
the verifier's client certificate (``--executor-ca/-cert/-key``, else Dask's own ``distributed.comm.tls``
settings). Parsing is pure; :func:`open_executor` connects (before any attempt is logged, so a typo costs
no cooldown).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from acx_oci.errors import UsageError

if TYPE_CHECKING:
    from acx_oci.services.executors.dask_cluster import DaskExecutor

LOCAL = "local"
DASK_EXTRA = "pip install 'acx-oci[dask]'"
_SCHEMES = {"dask": "tcp", "dask+tls": "tls"}


@dataclass(frozen=True)
class ExecutorSpec:
    kind: str  # "local" | "dask"
    address: str | None = None  # the scheduler, as Dask spells it: tcp://host:port or tls://host:port
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None

    @property
    def tls(self) -> bool:
        return bool(self.address and self.address.startswith("tls://"))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_executor(text: str, *, allow_plaintext: bool = False, ca_file: str | None = None,
                   cert_file: str | None = None, key_file: str | None = None) -> ExecutorSpec:
    """``local``, ``dask://HOST:PORT`` or ``dask+tls://HOST:PORT``; anything else is a usage error."""
    if text == LOCAL:
        if ca_file or cert_file or key_file:
            raise UsageError("--executor-ca/--executor-cert/--executor-key are for --executor dask+tls://HOST:PORT")
        return ExecutorSpec(LOCAL)
    parts = urlsplit(text)
    scheme = _SCHEMES.get(parts.scheme)
    try:
        port = parts.port
    except ValueError:
        port = None
    if scheme is None or not parts.hostname or port is None or parts.path not in ("", "/") or parts.query:
        raise UsageError(f"--executor: expected local, dask://HOST:PORT or dask+tls://HOST:PORT, found {text!r}")
    host = parts.hostname
    if scheme == "tcp" and not is_loopback(host) and not allow_plaintext:
        raise UsageError(f"--executor {text}: plain TCP to a non-loopback host would carry held-out tasks in the "
                         "clear; use dask+tls://, or --allow-plaintext-executor on a network you trust")
    if scheme == "tcp" and (ca_file or cert_file or key_file):
        raise UsageError("--executor-ca/--executor-cert/--executor-key need a dask+tls:// executor")
    shown = f"[{host}]" if ":" in host else host
    return ExecutorSpec("dask", f"{scheme}://{shown}:{port}", ca_file, cert_file, key_file)


def open_executor(spec: ExecutorSpec, timeout: float = 10.0) -> DaskExecutor | None:
    """None for ``local`` (the engine's own pool); a connected cluster client otherwise."""
    if spec.kind == LOCAL:
        return None
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise UsageError(f"--executor {spec.address}: Dask is not installed; {DASK_EXTRA}") from None
    from acx_oci.services.executors.dask_cluster import DaskExecutor

    return DaskExecutor(spec, timeout)
