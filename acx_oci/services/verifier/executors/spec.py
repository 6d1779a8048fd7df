"""The ``--executor`` address, parsed (pure): which scheme, which host, whether plain TCP may be used."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from acx_oci.errors import UsageError

LOCAL = "local"
DASK_EXTRA = "pip install 'acx-oci[dask]'"
_SCHEMES = {"dask": "tcp", "dask+tls": "tls"}


@dataclass(frozen=True)
class ExecutorSpec:
    """A parsed ``--executor``: local or a Dask scheduler address, with its TLS files and plaintext consent."""

    kind: str  # "local" | "dask"
    address: str | None = None  # the scheduler, as Dask spells it: tcp://host:port or tls://host:port
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    allow_plaintext: bool = False  # --allow-plaintext-executor: plain TCP to non-loopback workers too

    @property
    def tls(self) -> bool:
        """True when the scheduler is reached over TLS (``dask+tls://``, kept as Dask's ``tls://``)."""
        return bool(self.address and self.address.startswith("tls://"))


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP; a host name is not resolved here (spec is pure), so anything else is not."""
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
    return ExecutorSpec("dask", f"{scheme}://{shown}:{port}", ca_file, cert_file, key_file, allow_plaintext)


def loopback_worker(address: str) -> bool:
    """A worker Dask reaches at ``tcp://`` on a loopback address (its tasks never leave the machine)."""
    parts = urlsplit(address)
    return parts.scheme == "tcp" and bool(parts.hostname) and is_loopback(str(parts.hostname))
