"""Network edges that are not an OCI registry: one bounded HTTPS fetcher, TLS settings, the deadline guard and
the witness client. This face is what other wings use:

* :class:`PlainSession` - the HTTPS session the fetcher uses (no netrc, no cookie jar)
* TLS: ``client_context(host, insecure=..., ca_file=...)``, ``verify_setting``, ``ca_for``, ``default_ca_file`` /
  ``set_default_ca_file``, ``speaks_tls``, ``split_host_port``
* ``arm(until)`` -> :class:`Guard` and :class:`GuardedAdapter` - a deadline (monotonic) over a request and its body
* ``add_checkpoint`` - ask a witness to cosign a checkpoint (the tlog-witness protocol)

Example::

    from acx_oci.net import client_context, split_host_port

    host, port = split_host_port("registry.example", 443)
    context = client_context(f"{host}:{port}", insecure=False, ca_file=None)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.net.guard import Guard, GuardedAdapter, arm
    from acx_oci.net.session import PlainSession
    from acx_oci.net.tls import (
        ca_for,
        client_context,
        default_ca_file,
        set_default_ca_file,
        speaks_tls,
        split_host_port,
        verify_setting,
    )
    from acx_oci.net.witness import add_checkpoint
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "guard": ("Guard", "GuardedAdapter", "arm"),
        "session": ("PlainSession",),
        "tls": ("ca_for", "client_context", "default_ca_file", "set_default_ca_file", "speaks_tls", "split_host_port",
            "verify_setting"),
        "witness": ("add_checkpoint",),
    })

__all__ = ["Guard", "GuardedAdapter", "PlainSession", "add_checkpoint", "arm", "ca_for", "client_context",
           "default_ca_file", "set_default_ca_file", "speaks_tls", "split_host_port", "verify_setting"]
