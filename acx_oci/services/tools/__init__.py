"""Tools around the use cases: the demo, ``doctor`` (what this machine can run), the shipped examples, and
``runs`` (report cells from attest runs: it reads registries through the consumer, so it is not the exams wing's).

This face offers ``run_demo(workdir, registry=None, ...)`` and ``run_doctor(host, ...)`` (with ``CAPABILITIES``, the
registry features it probes); ``examples`` and ``runs`` are taken as modules. Example::

    from acx_oci.services.tools import run_doctor

    report = run_doctor("localhost:5000")
    print(report)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.services.tools.demo import run_demo
    from acx_oci.services.tools.doctor import CAPABILITIES, run_doctor
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "demo": ("run_demo",),
        "doctor": ("CAPABILITIES", "run_doctor"),
    })

__all__ = ["CAPABILITIES", "run_demo", "run_doctor"]
