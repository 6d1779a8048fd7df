"""The domain model, pure: what a credential, a capability, a ROM, a benchmark, an attempt record, a game record,
an exam certification record, a status list and a resolution are, how they are parsed and checked, and what they
derive (levels, digests, commitments). No network, no files. This face is what other wings use:

* capabilities: ``parse_capability(text)`` -> :class:`CapabilityRecord`, ``parse_requirement`` ->
  :class:`LevelFloor`, ``record_from_json``, ``to_purl``, ``check_task_type``
* credentials: ``level_result``, ``level_for(mu, sigma)``, ``issuer_id``, ``status_entries``, ``evidence_digest``,
  ``credential_attempt``; a verified one read as :class:`LevelView`
* resolutions: :class:`Resolution` of :class:`CapabilityResolution` (``VERIFIED`` / ``UNPROVEN``), each with its
  :class:`AcceptedCredential` and :class:`Rejection` entries and :class:`AttemptHistory`
* ROMs: :class:`CartridgeSource`, ``build_rom``, ``sign_rom``, ``check_signature`` -> :class:`SignatureCheck`,
  ``runtime_of`` / ``runtime_digest`` / ``runtime_limits``
* benchmarks: :class:`Benchmark`, ``from_document``, ``split`` (the public and the sealed slice),
  ``commitment_key``, ``grader_digest``
* attempts and games: :class:`AttemptRecord` (``parse_attempt_record``, ``sign_attempt_record``), game outcomes
  (``CERTIFIED_PASS``, ``MODEL_FAIL``, ``LANE_ERROR``, ``WITHHELD``), ``verify_game``, ``predicate``
* exam certification: :class:`CertificationRecord`, ``check_record``, ``summarize``
* status lists (``allocate_index``, ``list_subject``), agent cards (``build_agent_card``, ``sign_agent_card``),
  the model API's constants (``MODEL_PORT``, ``SOCKET_INSIDE``, ``parse_model_flag``), tiers (``TIER_NAMES``)

Some callers take a whole module as a namespace (``from acx_oci.model import modelapi as ma``,
``statuslist``, ``rating as ts``); the names above are the face. ``ANN_ID`` and ``ANN_VERSION`` are two modules'
(benchmark's, ROM's) and are imported from them. Example::

    from acx_oci.model import level_for, parse_capability, to_purl

    cap = parse_capability("review[python]")
    assert to_purl("python") in cap.display()
    level, name = level_for(mu=30.0, sigma=1.2)  # (26, "principal")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.model.agentcard import (
        build_agent_card,
        card_signers,
        level_phrase,
        level_word,
        sig_of,
        sign_agent_card,
        verify_signed_by,
    )
    from acx_oci.model.attempt import (
        SCOPE_PUBLISHER,
        SCOPE_ROM,
        SCOPE_ROM_CLAIM,
        VERDICT_ISSUED,
        VERDICT_NOT_ISSUED,
        AttemptCount,
        AttemptRecord,
        new_attempt_id,
        parse_attempt_record,
        reason_pairs,
        record_bytes,
        sign_attempt_record,
    )
    from acx_oci.model.benchmark import (
        ANN_CAPABILITY,
        ANN_CERTIFICATION,
        ANN_DIGEST,
        ANN_HELD_OUT,
        DESCRIPTOR_SCHEMA,
        HELD_OUT_SCHEMA,
        MAX_SLICE_BYTES,
        MEDIA_DESCRIPTOR,
        MEDIA_PUBLIC,
        MEDIA_SEALED,
        PUBLIC_SCHEMA,
        SCHEMA_FILE,
        SEAL_INFO,
        SEAL_KEY_FILE,
        SUITE_FILE,
        Benchmark,
        commitment_key,
        customer_of,
        from_document,
        grader_digest,
        held_out_slice_digest,
        is_private,
        split,
    )
    from acx_oci.model.capability import (
        CapabilityRecord,
        LevelFloor,
        check_task_type,
        parse_capability,
        parse_requirement,
        record_from_json,
        to_purl,
    )
    from acx_oci.model.credential import (
        credential_attempt,
        evidence_digest,
        issuer_id,
        level_for,
        level_result,
        status_entries,
    )
    from acx_oci.model.exam import ENV_FILE, SOURCE_FILE
    from acx_oci.model.exam_record import CertificationRecord, check_record, classification_of, skipped, summarize
    from acx_oci.model.gamerecords import (
        CERTIFIED_PASS,
        INVALID,
        LANE_ERROR,
        MODEL_FAIL,
        OUTCOMES,
        RATED,
        WITHHELD,
        game_predicate,
        is_rated,
        predicate,
        task_commitment,
        verify_game,
    )
    from acx_oci.model.level_credential import LevelCredential
    from acx_oci.model.level_view import LevelView
    from acx_oci.model.modelapi import MODEL_PORT, SOCKET_INSIDE, parse_model_flag
    from acx_oci.model.rating import TIER_FLOOR, TIER_NAMES
    from acx_oci.model.resolution import (
        UNPROVEN,
        VERIFIED,
        AcceptedCredential,
        AttemptEntry,
        AttemptHistory,
        CapabilityResolution,
        Rejection,
        Resolution,
    )
    from acx_oci.model.rom import (
        ANN_ROM,
        MAX_ROM_BYTES,
        MAX_ROM_FILES,
        MAX_ROM_FILES_TOTAL,
        MAX_SAVE_BYTES,
        MEDIA_ROM,
        MEDIA_ROM_FILE,
        MEDIA_SAVE,
        STATUS_TAMPERED,
        STATUS_UNSIGNED,
        STATUS_VALID,
        STATUS_WARNING,
        CartridgeSource,
        SignatureCheck,
        build_rom,
        check_signature,
        runtime_digest,
        runtime_limits,
        runtime_of,
        sign_rom,
        status_display,
        training_cutoff,
        version_key,
    )
    from acx_oci.model.statuslist import MIN_ENTRIES, SEQUENCE, allocate_index, list_subject, rfc3339
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "agentcard": ("build_agent_card", "card_signers", "level_phrase", "level_word", "sig_of", "sign_agent_card",
            "verify_signed_by"),
        "attempt": ("AttemptCount", "AttemptRecord", "SCOPE_PUBLISHER", "SCOPE_ROM", "SCOPE_ROM_CLAIM",
            "VERDICT_ISSUED", "VERDICT_NOT_ISSUED", "new_attempt_id", "parse_attempt_record", "reason_pairs",
            "record_bytes", "sign_attempt_record"),
        "benchmark": ("ANN_CAPABILITY", "ANN_CERTIFICATION", "ANN_DIGEST", "ANN_HELD_OUT", "Benchmark",
            "DESCRIPTOR_SCHEMA", "HELD_OUT_SCHEMA", "MAX_SLICE_BYTES", "MEDIA_DESCRIPTOR", "MEDIA_PUBLIC",
            "MEDIA_SEALED", "PUBLIC_SCHEMA", "SCHEMA_FILE", "SEAL_INFO", "SEAL_KEY_FILE", "SUITE_FILE",
            "commitment_key", "customer_of", "from_document", "grader_digest", "held_out_slice_digest", "is_private",
            "split"),
        "capability": ("CapabilityRecord", "LevelFloor", "check_task_type", "parse_capability", "parse_requirement",
            "record_from_json", "to_purl"),
        "credential": ("credential_attempt", "evidence_digest", "issuer_id", "level_for", "level_result",
            "status_entries"),
        "exam": ("ENV_FILE", "SOURCE_FILE"),
        "exam_record": ("CertificationRecord", "check_record", "classification_of", "skipped", "summarize"),
        "gamerecords": ("CERTIFIED_PASS", "INVALID", "LANE_ERROR", "MODEL_FAIL", "OUTCOMES", "RATED", "WITHHELD",
            "game_predicate", "is_rated", "predicate", "task_commitment", "verify_game"),
        "level_credential": ("LevelCredential",),
        "level_view": ("LevelView",),
        "modelapi": ("MODEL_PORT", "SOCKET_INSIDE", "parse_model_flag"),
        "rating": ("TIER_FLOOR", "TIER_NAMES"),
        "resolution": ("AcceptedCredential", "AttemptEntry", "AttemptHistory", "CapabilityResolution", "Rejection",
            "Resolution", "UNPROVEN", "VERIFIED"),
        "rom": ("ANN_ROM", "CartridgeSource", "MAX_ROM_BYTES", "MAX_ROM_FILES", "MAX_ROM_FILES_TOTAL", "MAX_SAVE_BYTES",
            "MEDIA_ROM", "MEDIA_ROM_FILE", "MEDIA_SAVE", "STATUS_TAMPERED", "STATUS_UNSIGNED", "STATUS_VALID",
            "STATUS_WARNING", "SignatureCheck", "build_rom", "check_signature", "runtime_digest", "runtime_limits",
            "runtime_of", "sign_rom", "status_display", "training_cutoff", "version_key"),
        "statuslist": ("MIN_ENTRIES", "SEQUENCE", "allocate_index", "list_subject", "rfc3339"),
    })

__all__ = ["ANN_CAPABILITY", "ANN_CERTIFICATION", "ANN_DIGEST", "ANN_HELD_OUT", "ANN_ROM", "CERTIFIED_PASS",
           "DESCRIPTOR_SCHEMA", "ENV_FILE", "HELD_OUT_SCHEMA", "INVALID", "LANE_ERROR", "MAX_ROM_BYTES",
           "MAX_ROM_FILES", "MAX_ROM_FILES_TOTAL", "MAX_SAVE_BYTES", "MAX_SLICE_BYTES", "MEDIA_DESCRIPTOR",
           "MEDIA_PUBLIC", "MEDIA_ROM", "MEDIA_ROM_FILE", "MEDIA_SAVE", "MEDIA_SEALED", "MIN_ENTRIES", "MODEL_FAIL",
           "MODEL_PORT", "OUTCOMES", "PUBLIC_SCHEMA", "RATED", "SCHEMA_FILE", "SCOPE_PUBLISHER", "SCOPE_ROM",
           "SCOPE_ROM_CLAIM", "SEAL_INFO", "SEAL_KEY_FILE", "SEQUENCE", "SOCKET_INSIDE", "SOURCE_FILE",
           "STATUS_TAMPERED", "STATUS_UNSIGNED", "STATUS_VALID", "STATUS_WARNING", "SUITE_FILE", "TIER_FLOOR",
           "TIER_NAMES", "UNPROVEN", "VERDICT_ISSUED", "VERDICT_NOT_ISSUED", "VERIFIED", "WITHHELD",
           "AcceptedCredential", "AttemptCount", "AttemptEntry", "AttemptHistory", "AttemptRecord", "Benchmark",
           "CapabilityRecord", "CapabilityResolution", "CartridgeSource", "CertificationRecord", "LevelCredential",
           "LevelFloor", "LevelView", "Rejection", "Resolution", "SignatureCheck", "allocate_index", "build_agent_card",
           "build_rom", "card_signers", "check_record", "check_signature", "check_task_type", "classification_of",
           "commitment_key", "credential_attempt", "customer_of", "evidence_digest", "from_document", "game_predicate",
           "grader_digest", "held_out_slice_digest", "is_private", "is_rated", "issuer_id", "level_for", "level_phrase",
           "level_result", "level_word", "list_subject", "new_attempt_id", "parse_attempt_record", "parse_capability",
           "parse_model_flag", "parse_requirement", "predicate", "reason_pairs", "record_bytes", "record_from_json",
           "rfc3339", "runtime_digest", "runtime_limits", "runtime_of", "sig_of", "sign_agent_card",
           "sign_attempt_record", "sign_rom", "skipped", "split", "status_display", "status_entries", "summarize",
           "task_commitment", "to_purl", "training_cutoff", "verify_game", "verify_signed_by", "version_key"]
