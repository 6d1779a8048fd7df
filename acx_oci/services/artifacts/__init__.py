"""Our artifacts on OCI, both ways: cartridges, benchmarks, attestations and status lists, exam
certifications, the cosign projection, and the transparency log's OCI layout and reader.

Imports neither ``consumer`` nor ``verifier`` (an import contract): both sides build on it. This face is what other
wings use:

* cartridges: ``init_directory``, ``push_directory``, ``load_cartridge`` -> :class:`LoadedCartridge`,
  ``rom_files``, ``write_directory``
* attestations: ``push_attestation``, ``push_attempt_record``, their layers (``credential_layer``,
  ``evidence_layers``, ``records_layer``, ``split_records``); status lists: ``publish_status_list``,
  ``fetch_status_list``, ``status_tag``
* the cosign projection and Sigstore bundles: ``attestation_envelope``, ``push_attestation_envelopes``,
  ``push_projection_layers``, ``push_bundle``, ``remove_bundle``
* the log on OCI: :class:`LogReader`, ``entry_bytes`` / ``parse_entry``; benchmarks: ``with_graded_tests``
  (the benchmark module itself is taken whole: ``from acx_oci.services.artifacts import benchmark``)

Example::

    from pathlib import Path

    from acx_oci.oci import open_store
    from acx_oci.services.artifacts import load_cartridge, push_directory

    store = open_store("oci:./layout")
    push_directory(store, Path("my-agent"), signer, tag="1.0")
    assert load_cartridge(store, "1.0", trust=None).rom_digest
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.services.artifacts.attestation import (
        ANN_CAPABILITY,
        MAX_CREDENTIAL_BYTES,
        MAX_RECORDS_BYTES,
        MAX_STATUS_LIST_BYTES,
        STATUS_TAG_PREFIX,
        credential_layer,
        evidence_layers,
        fetch_status_list,
        fetch_status_list_https,
        names_status_tag,
        publish_status_list,
        push_attempt_record,
        push_attestation,
        records_layer,
        split_records,
        status_tag,
    )
    from acx_oci.services.artifacts.benchmark_graded import with_graded_tests
    from acx_oci.services.artifacts.cartridge import (
        LoadedCartridge,
        init_directory,
        load_cartridge,
        push_directory,
        rom_files,
        write_directory,
    )
    from acx_oci.services.artifacts.certification import NO_RECORD
    from acx_oci.services.artifacts.cosign_projection import (
        ANN_PREDICATE_TYPE,
        PREDICATE_LEVEL,
        attestation_envelope,
        cosign_tag,
        push_attestation_envelopes,
        push_projection_layers,
    )
    from acx_oci.services.artifacts.cosign_referrer import (
        ANN_BUNDLE_PREDICATE,
        MEDIA_BUNDLE,
        bundle_bytes,
        push_bundle,
        remove_bundle,
    )
    from acx_oci.services.artifacts.log_entries import entry_bytes, parse_entry
    from acx_oci.services.artifacts.log_reader import (
        ANNOTATION_ORIGIN,
        ANNOTATION_PATH,
        ANNOTATION_SIZE,
        ANNOTATION_VKEY,
        ARTIFACT_LOG,
        CHECKPOINT,
        CHECKPOINT_TAG,
        MEDIA_CHECKPOINT,
        MEDIA_ENTRIES,
        MEDIA_TILE,
        MEDIA_TILE_INDEX,
        LogReader,
    )
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "attestation": ("ANN_CAPABILITY", "MAX_CREDENTIAL_BYTES", "MAX_RECORDS_BYTES", "MAX_STATUS_LIST_BYTES",
            "STATUS_TAG_PREFIX", "credential_layer", "evidence_layers", "fetch_status_list", "fetch_status_list_https",
            "names_status_tag", "publish_status_list", "push_attempt_record", "push_attestation", "records_layer",
            "split_records", "status_tag"),
        "benchmark_graded": ("with_graded_tests",),
        "cartridge": ("LoadedCartridge", "init_directory", "load_cartridge", "push_directory", "rom_files",
            "write_directory"),
        "certification": ("NO_RECORD",),
        "cosign_projection": ("ANN_PREDICATE_TYPE", "PREDICATE_LEVEL", "attestation_envelope", "cosign_tag",
            "push_attestation_envelopes", "push_projection_layers"),
        "cosign_referrer": ("ANN_BUNDLE_PREDICATE", "MEDIA_BUNDLE", "bundle_bytes", "push_bundle", "remove_bundle"),
        "log_entries": ("entry_bytes", "parse_entry"),
        "log_reader": ("ANNOTATION_ORIGIN", "ANNOTATION_PATH", "ANNOTATION_SIZE", "ANNOTATION_VKEY", "ARTIFACT_LOG",
            "CHECKPOINT", "CHECKPOINT_TAG", "LogReader", "MEDIA_CHECKPOINT", "MEDIA_ENTRIES", "MEDIA_TILE",
            "MEDIA_TILE_INDEX"),
    })

__all__ = ["ANNOTATION_ORIGIN", "ANNOTATION_PATH", "ANNOTATION_SIZE", "ANNOTATION_VKEY", "ANN_BUNDLE_PREDICATE",
           "ANN_CAPABILITY", "ANN_PREDICATE_TYPE", "ARTIFACT_LOG", "CHECKPOINT", "CHECKPOINT_TAG",
           "MAX_CREDENTIAL_BYTES", "MAX_RECORDS_BYTES", "MAX_STATUS_LIST_BYTES", "MEDIA_BUNDLE", "MEDIA_CHECKPOINT",
           "MEDIA_ENTRIES", "MEDIA_TILE", "MEDIA_TILE_INDEX", "NO_RECORD", "PREDICATE_LEVEL", "STATUS_TAG_PREFIX",
           "LoadedCartridge", "LogReader", "attestation_envelope", "bundle_bytes", "cosign_tag", "credential_layer",
           "entry_bytes", "evidence_layers", "fetch_status_list", "fetch_status_list_https", "init_directory",
           "load_cartridge", "names_status_tag", "parse_entry", "publish_status_list", "push_attempt_record",
           "push_attestation", "push_attestation_envelopes", "push_bundle", "push_directory", "push_projection_layers",
           "records_layer", "remove_bundle", "rom_files", "split_records", "status_tag", "with_graded_tests",
           "write_directory"]
