"""Model egress: the verifier-run proxy through which a sandboxed agent reaches its model (and nothing else)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.egress.probe import ProbeEgress
    from acx_oci.egress.session import ModelSetup, model_key
    from acx_oci.egress.standin import StandinProvider, SuiteReferenceSolver
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "probe": ("ProbeEgress",),
        "session": ("ModelSetup", "model_key"),
        "standin": ("StandinProvider", "SuiteReferenceSolver"),
    })

__all__ = ["ModelSetup", "ProbeEgress", "StandinProvider", "SuiteReferenceSolver", "model_key"]
