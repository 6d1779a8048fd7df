"""Network edges that are not an OCI registry: one bounded HTTPS fetcher."""

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
