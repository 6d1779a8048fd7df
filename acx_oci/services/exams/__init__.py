"""Exams: made from a repository's history (``importer``, ``candidates``, ``harvest``, ``swebench``) and
certified (``acx-oci exam certify|canary scan|report``). This face is what other wings and the CLI use:

* ``certify_suite(path, *, jobs, out, patterns=None, gold_runs=3, executor=None) -> list[CertificationRecord]`` -
  certify
  a suite dir (or one exam dir); one sealed record per exam, written to ``out/records/<exam>.json``
  (never into the suite) and cached by freeze hash (``out/by-freeze/<hex>.json``): an exam whose freeze
  hash has a stored, sound record is not re-run. Also writes ``out/summary.json`` and the host-only canary
  registry ``out/canaries.json``. Optional: ``environments`` (each exam's image,
  :class:`environments.EnvImages`; None: the host's Python grades and a spec'd exam's record says ``host``)
  and ``stages`` (which stage each exam is in).
* ``load_records(out) -> dict[exam_id, CertificationRecord]`` - every stored record, each checked once as it
  is read (:meth:`acx_oci.model.exam_record.CertificationRecord.load`: a record with problems raises
  :class:`IntegrityError`).
* ``suite_freeze_hashes(path) -> dict[exam_id, freeze hash]`` - recomputed from the suite's files, nothing
  run; compare with ``record.freeze_hash`` (a mismatch = uncertified).
* ``scan_for_canaries(files, registry) -> list[dict]`` and ``suite_canaries(path)``.
* ``report(out) -> dict`` - the summary regenerated from the records; raises when ``summary.json`` disagrees.

Pure pieces live in the model: the record type, its checks and the summary in :mod:`acx_oci.model.exam_record`,
the freeze hash in :mod:`acx_oci.model.exam`. Example::

    from pathlib import Path
    from acx_oci.services import exams

    records = exams.certify_suite(Path("suite"), jobs=2, out=Path("certs"))
    assert set(exams.load_records(Path("certs"))) == {r.exam for r in records}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.services.exams.certify import (
        FINISHED,
        GOLD_RUNS,
        REGISTRY_FILE,
        STREAM_FILE,
        SUMMARY_FILE,
        certify_suite,
        default_out,
        load_records,
        load_registry,
        report,
        scan_for_canaries,
        stderr_progress,
        suite_canaries,
        suite_freeze_hashes,
    )
    from acx_oci.services.exams.derivation import derived_ids, explicit_ids, with_ids
    from acx_oci.services.exams.environments import EnvImages, StageReport, carrying_specs, default_store
    from acx_oci.services.exams.harvest import Grading
    from acx_oci.services.exams.predictions import Images
    from acx_oci.services.exams.source import discover
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "certify": ("FINISHED", "GOLD_RUNS", "REGISTRY_FILE", "STREAM_FILE", "SUMMARY_FILE", "certify_suite",
            "default_out", "load_records", "load_registry", "report", "scan_for_canaries", "stderr_progress",
            "suite_canaries", "suite_freeze_hashes"),
        "derivation": ("derived_ids", "explicit_ids", "with_ids"),
        "environments": ("EnvImages", "StageReport", "carrying_specs", "default_store"),
        "harvest": ("Grading",),
        "predictions": ("Images",),
        "source": ("discover",),
    })

__all__ = ["FINISHED", "GOLD_RUNS", "REGISTRY_FILE", "STREAM_FILE", "SUMMARY_FILE", "EnvImages", "Grading", "Images",
           "StageReport", "carrying_specs", "certify_suite", "default_out", "default_store", "derived_ids", "discover",
           "explicit_ids", "load_records", "load_registry", "report", "scan_for_canaries", "stderr_progress",
           "suite_canaries", "suite_freeze_hashes", "with_ids"]
