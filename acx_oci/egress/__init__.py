"""Model egress: the verifier-run proxy through which a sandboxed agent reaches its model (and nothing else).
This face is what other wings use:

* :class:`ModelSetup` and ``model_key(entry)`` - one model from the verifier's models file, as the proxy serves it
* :class:`ProbeEgress` - a real model proxy, as a game's, in front of a probe upstream (containment proofs)
* :class:`StandinProvider` - the stand-in model's HTTP server; :class:`SuiteReferenceSolver` - what it answers for
  a suite (each task's reference solution)

Example::

    from acx_oci.egress import ModelSetup, model_key

    setup = ModelSetup(entry, model_key(entry))  # entry: a ModelEntry from the models file
"""

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
