"""The verifier's side: the attest pipeline (``attest`` and its steps ``request``, ``check``, ``plan``,
``play``, ``outcome``, ``issue``, ``log``), the ledger, publish, revoke, transcripts, the models
file, exposures, environment images, regression, executors, and the transparency log writer
(``log_tree`` on disk, ``log_publish`` to a registry). This face is what other wings use:

* attest's request and outcome: :class:`AttestRequest` with :class:`RegistryOptions`, :class:`SandboxOptions`,
  :class:`ModelOptions`, :class:`GateOptions`, :class:`BaselineOptions`; the outcome is :class:`Issued`,
  :class:`NotIssued` or :class:`Refused` (``AttestOutcome``). ``attest``, ``revoke`` and ``rebuild`` themselves are
  imported from their modules (``acx_oci.services.verifier.attest`` ...): a face name would hide the module
* publish: ``new_run_dir``, ``publish_folder``, ``run_issuer``; status: ``refresh``
* the log: :class:`VerifierLog`, ``log_options`` -> :class:`LogOptions`, :class:`Logged`, ``parse_witness``
* executors: ``parse_executor``, ``open_executor`` -> :class:`DaskExecutor`
* ``load_models``, ``listing`` (exposures), transcripts (``export``, ``load_export``), ``DEFAULT_TOLERANCE``

Example::

    from datetime import UTC, datetime
    from pathlib import Path

    from acx_oci.services.verifier import new_run_dir, publish_folder

    out = new_run_dir(Path("state"))
    # ... acx_oci.services.verifier.attest.attest(request) fills it ...
    publish_folder(out, verifier, Path("state"), datetime.now(UTC))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.services.verifier.attest import (
        AttestOutcome,
        AttestRequest,
        BaselineOptions,
        GateOptions,
        Issued,
        ModelOptions,
        NotIssued,
        Refused,
        RegistryOptions,
        SandboxOptions,
    )
    from acx_oci.services.verifier.executors import open_executor, parse_executor
    from acx_oci.services.verifier.executors.dask_cluster import DaskExecutor
    from acx_oci.services.verifier.exposures import listing
    from acx_oci.services.verifier.log import Logged, LogOptions, VerifierLog, log_options, parse_witness
    from acx_oci.services.verifier.models import load_models
    from acx_oci.services.verifier.publish_dir import new_run_dir, publish_folder, run_issuer
    from acx_oci.services.verifier.regression import DEFAULT_TOLERANCE
    from acx_oci.services.verifier.revoke import refresh
    from acx_oci.services.verifier.transcripts import ModelReplayExport, ModelReplayReport, export, load_export
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "attest": ("AttestOutcome", "AttestRequest", "BaselineOptions", "GateOptions", "Issued", "ModelOptions",
            "NotIssued", "Refused", "RegistryOptions", "SandboxOptions"),
        "executors": ("open_executor", "parse_executor"),
        "executors.dask_cluster": ("DaskExecutor",),
        "exposures": ("listing",),
        "log": ("LogOptions", "Logged", "VerifierLog", "log_options", "parse_witness"),
        "models": ("load_models",),
        "publish_dir": ("new_run_dir", "publish_folder", "run_issuer"),
        "regression": ("DEFAULT_TOLERANCE",),
        "revoke": ("refresh",),
        "transcripts": ("ModelReplayExport", "ModelReplayReport", "export", "load_export"),
    })

__all__ = ["DEFAULT_TOLERANCE", "AttestOutcome", "AttestRequest", "BaselineOptions", "DaskExecutor", "GateOptions",
           "Issued", "LogOptions", "Logged", "ModelOptions", "ModelReplayExport", "ModelReplayReport", "NotIssued",
           "Refused", "RegistryOptions", "SandboxOptions", "VerifierLog", "export", "listing", "load_export",
           "load_models", "log_options", "new_run_dir", "open_executor", "parse_executor", "parse_witness",
           "publish_folder", "refresh", "run_issuer"]
