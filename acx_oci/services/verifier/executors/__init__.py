"""Where a run's games are played: here (``local``, a pool of ``--jobs`` threads) or on a Dask cluster.

``--executor dask://HOST:PORT`` is plain TCP and is refused for anything but a loopback host unless the
verifier says ``--allow-plaintext-executor``: held-out task plaintext crosses that wire. ``dask+tls://`` uses
the verifier's client certificate (``--executor-ca/-cert/-key``, else Dask's own ``distributed.comm.tls``
settings). Parsing is pure; :func:`open_executor` connects (before any attempt is logged, so a typo costs
no cooldown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.errors import UsageError
from acx_oci.services.verifier.executors.spec import DASK_EXTRA, LOCAL, ExecutorSpec, is_loopback, parse_executor

if TYPE_CHECKING:
    from acx_oci.services.verifier.executors.dask_cluster import DaskExecutor

__all__ = ["DASK_EXTRA", "LOCAL", "ExecutorSpec", "is_loopback", "open_executor", "parse_executor"]


def open_executor(spec: ExecutorSpec, timeout: float = 10.0) -> DaskExecutor | None:
    """None for ``local`` (the engine's own pool); a connected cluster client otherwise."""
    if spec.kind == LOCAL:
        return None
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise UsageError(f"--executor {spec.address}: Dask is not installed; {DASK_EXTRA}") from None
    from acx_oci.services.verifier.executors.dask_cluster import DaskExecutor

    return DaskExecutor(spec, timeout)
