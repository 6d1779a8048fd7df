"""What building an environment image needs of this machine, checked in seconds before minutes of work.

``env build --spec`` (and ``exam certify``, which builds a missing image) needs mmdebstrap for the Debian root,
bubblewrap for the install sandbox and the package index for the resolution. Without one of them every spec
fails the same way, after pip's retries (minutes on a network that drops packets) or after the resolution
downloaded every wheel. :func:`check` says which is missing, as :class:`MachineUnfit`, and what to do.
"""

from __future__ import annotations

import shutil
import socket
import urllib.parse
import urllib.request

from acx_oci.errors import MachineUnfit

DEFAULT_INDEX = "https://pypi.org/simple"
#: One TCP connect to the index (or the proxy that reaches it): a machine without a route says so in this time.
CONNECT_SECONDS = 10.0


def require_tools(*, mmdebstrap: bool = True) -> None:
    """mmdebstrap (unless the Debian root's tar is at hand) and bubblewrap are on PATH."""
    if mmdebstrap and shutil.which("mmdebstrap") is None:
        raise MachineUnfit("mmdebstrap not found, which makes the image's Debian root; "
                           "install Debian 'mmdebstrap' (apt-get install mmdebstrap)")
    if shutil.which("bwrap") is None:
        raise MachineUnfit("bubblewrap not found (bwrap), in which the packages are installed and every grade "
                           "runs; install Debian 'bubblewrap'", host_can_grade=False)


def _endpoint(index_url: str) -> tuple[str, int] | None:
    """The (host, port) a connection to ``index_url`` opens first: its proxy's when one applies; None for a
    local index (``file:``, a path) that needs no network."""
    url = urllib.parse.urlsplit(index_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        return None
    proxy = urllib.request.getproxies().get(url.scheme)
    if proxy and not urllib.request.proxy_bypass(url.hostname):
        p = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if p.hostname:
            return p.hostname, p.port or 8080
    return url.hostname, url.port or (443 if url.scheme == "https" else 80)


def probe_index(index_url: str | None, timeout: float = CONNECT_SECONDS) -> None:
    """One connection to the package index (or its proxy); :class:`MachineUnfit` when it cannot be opened.
    Only reachability: what the index answers is pip's to judge."""
    url = index_url or DEFAULT_INDEX
    where = _endpoint(url)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=timeout):
            return
    except OSError as exc:
        why = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise MachineUnfit(f"the package index {url} is unreachable from this machine ({where[0]}:{where[1]}: "
                           f"{why}); connect this machine, or give a reachable --index-url (file:///DIR for wheels on "
                           "disk)") from None


def check(index_url: str | None, *, mmdebstrap: bool = True) -> None:
    """Everything a build needs of the machine, tools first (no network spent when one is missing)."""
    require_tools(mmdebstrap=mmdebstrap)
    probe_index(index_url)
