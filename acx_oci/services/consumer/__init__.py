"""The consumer's side: ``resolve`` and what it fetches (attestations, records, replays, log proofs)
and remembers (status lists, verdicts, log heads), ``copy`` (the verified mirror), ``pull``, and
the log monitor (``log_audit``).

Never imports ``verifier`` (an import contract): the gateway runs this code, not the verifier's. This face is what
other wings use:

* ``resolve_cartridge(store, target, trust, *, now, limits=None, ...)`` -> :class:`~acx_oci.model.Resolution`
  (and ``resolve_loaded`` for a cartridge already loaded; :class:`ResolveLimits` bounds the work)
* what it remembers across runs: :class:`StatusHistory`, :class:`LogHistory`
* ``copy_artifact(CopyRequest(...))`` -> :class:`CopyOutcome`; ``write_pull`` (with ``check_pullable``)
* the log monitor: ``verify_log``, ``export_log`` -> :class:`LogReport`
* pieces the gateway reuses: ``fetch_one``, ``material_of``, ``answer_needs``, ``repository_credentials``,
  :class:`DidFetcher`, ``replay_jobs``

Example::

    from datetime import UTC, datetime

    from acx_oci.oci import open_store
    from acx_oci.services.consumer import resolve_cartridge
    from acx_oci.trust import load_trust

    resolution = resolve_cartridge(open_store("localhost:5000/acme/agent"), "1.0", load_trust("trust.yaml"),
                                   now=datetime.now(UTC))
    for cap in resolution.capabilities:
        print(cap.capability.display(), cap.effective)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.services.consumer.answers import answer_needs
    from acx_oci.services.consumer.attestation_fetch import BlobMemo, credential_file, fetch_layers, fetch_one
    from acx_oci.services.consumer.copy import CopyOutcome, CopyRequest, copy_artifact
    from acx_oci.services.consumer.did_keys import DidFetcher
    from acx_oci.services.consumer.log_audit import LogReport, export_log, verify_log
    from acx_oci.services.consumer.log_fetch import gather_logs, remember_logs
    from acx_oci.services.consumer.logcache import LogHistory
    from acx_oci.services.consumer.pull import check_output_dir, check_pullable, write_pull
    from acx_oci.services.consumer.replay import ReplayJob, replay_jobs
    from acx_oci.services.consumer.resolve import ResolveLimits, cartridge_facts, resolve_cartridge, resolve_loaded
    from acx_oci.services.consumer.resolve_fetch import StatusSources, material_of
    from acx_oci.services.consumer.status_owners import MAX_OWNER_READS, CredentialMemo, repository_credentials
    from acx_oci.services.consumer.statuscache import StatusHistory
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "answers": ("answer_needs",),
        "attestation_fetch": ("BlobMemo", "credential_file", "fetch_layers", "fetch_one"),
        "copy": ("CopyOutcome", "CopyRequest", "copy_artifact"),
        "did_keys": ("DidFetcher",),
        "log_audit": ("LogReport", "export_log", "verify_log"),
        "log_fetch": ("gather_logs", "remember_logs"),
        "logcache": ("LogHistory",),
        "pull": ("check_output_dir", "check_pullable", "write_pull"),
        "replay": ("ReplayJob", "replay_jobs"),
        "resolve": ("ResolveLimits", "cartridge_facts", "resolve_cartridge", "resolve_loaded"),
        "resolve_fetch": ("StatusSources", "material_of"),
        "status_owners": ("CredentialMemo", "MAX_OWNER_READS", "repository_credentials"),
        "statuscache": ("StatusHistory",),
    })

__all__ = ["MAX_OWNER_READS", "BlobMemo", "CopyOutcome", "CopyRequest", "CredentialMemo", "DidFetcher", "LogHistory",
           "LogReport", "ReplayJob", "ResolveLimits", "StatusHistory", "StatusSources", "answer_needs",
           "cartridge_facts", "check_output_dir", "check_pullable", "copy_artifact", "credential_file", "export_log",
           "fetch_layers", "fetch_one", "gather_logs", "material_of", "remember_logs", "replay_jobs",
           "repository_credentials", "resolve_cartridge", "resolve_loaded", "verify_log", "write_pull"]
