"""The consumer's judgement, pure: credentials and their evidence in, verdicts out. The judge runs every
verification rule on fetched bytes (:class:`Material`) and yields what it needs from outside (:class:`NeedReplay`,
a DID document) as data; the policy turns a :class:`~acx_oci.model.resolution.Resolution` into a :class:`Verdict`.
This face is what other wings use:

* the judge: ``judging(material, cart, trust, now)`` (a generator of needs, ending in a :class:`Judgement`),
  ``capability_verdicts``, ``accepting`` / ``accept_credential`` / ``one_attestation`` (the gateway's and
  ``copy``'s one-credential checks); its inputs :class:`Material`, :class:`FetchedAttestation`,
  :class:`CartridgeFacts`, :class:`Expected`
* checks: :class:`Check` (``ok``, ``bad``, ``skip``), ``proof_only``, ``offline_keys`` (a :data:`KeyResolver`
  from the trust file)
* replay: ``replay_credential``, ``record_digests``, ``inline_record``; attempts: ``with_attempts``,
  ``with_log_attempts``; logs: ``pinned_keys`` -> :class:`LogKeys`, :class:`LogView`, ``head_status``
* status lists: ``sequence``, ``sequence_of``, ``may_replace``, ``list_owners``, ``status_url``
* policy: ``load_policy(path)`` -> :class:`Policy`, ``evaluate(policy, repository, resolution, now)`` ->
  :class:`Verdict`; ``--require`` text: ``parse_require``, ``unmet``

Example::

    from datetime import UTC, datetime

    from acx_oci.evaluation import evaluate, load_policy
    from acx_oci.services.consumer import resolve_cartridge

    resolution = resolve_cartridge(store, "agent:1.0", trust, now=datetime.now(UTC))
    verdict = evaluate(load_policy("policy.yaml"), "registry.example/acme/agent", resolution, datetime.now(UTC))
    print(verdict.allowed, verdict.notes)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.evaluation.accept import accept_credential, accepting, one_attestation
    from acx_oci.evaluation.attempt_history import FetchedRecord, with_attempts
    from acx_oci.evaluation.checks import Check, KeyResolver, VerifyResult, bad, base, offline_keys, ok, skip
    from acx_oci.evaluation.did_documents import DidDocuments
    from acx_oci.evaluation.judge import LOG_CHECK, capability_verdicts, instant, judging, order_key
    from acx_oci.evaluation.judge_input import (
        Answer,
        CartridgeFacts,
        Expected,
        FetchedAttestation,
        Judgement,
        Material,
        Need,
        NeedReplay,
        StatusKey,
    )
    from acx_oci.evaluation.log_check import NO_LOG_NOTE, LogKeys, LogView, head_status, pinned_keys, with_log_attempts
    from acx_oci.evaluation.policy import Policy, evaluate, load_policy
    from acx_oci.evaluation.replay import NAME, inline_record, record_digests, replay_credential
    from acx_oci.evaluation.require_text import parse_require, unmet
    from acx_oci.evaluation.requirements import RequirementResult, Verdict
    from acx_oci.evaluation.status_choice import FLOOR, sequence, status_url
    from acx_oci.evaluation.status_replace import list_owners, may_replace, sequence_of
    from acx_oci.evaluation.verify import proof_only
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "accept": ("accept_credential", "accepting", "one_attestation"),
        "attempt_history": ("FetchedRecord", "with_attempts"),
        "checks": ("Check", "KeyResolver", "VerifyResult", "bad", "base", "offline_keys", "ok", "skip"),
        "did_documents": ("DidDocuments",),
        "judge": ("LOG_CHECK", "capability_verdicts", "instant", "judging", "order_key"),
        "judge_input": ("Answer", "CartridgeFacts", "Expected", "FetchedAttestation", "Judgement", "Material", "Need",
            "NeedReplay", "StatusKey"),
        "log_check": ("LogKeys", "LogView", "NO_LOG_NOTE", "head_status", "pinned_keys", "with_log_attempts"),
        "policy": ("Policy", "evaluate", "load_policy"),
        "replay": ("NAME", "inline_record", "record_digests", "replay_credential"),
        "require_text": ("parse_require", "unmet"),
        "requirements": ("RequirementResult", "Verdict"),
        "status_choice": ("FLOOR", "sequence", "status_url"),
        "status_replace": ("list_owners", "may_replace", "sequence_of"),
        "verify": ("proof_only",),
    })

__all__ = ["FLOOR", "LOG_CHECK", "NAME", "NO_LOG_NOTE", "Answer", "CartridgeFacts", "Check", "DidDocuments", "Expected",
           "FetchedAttestation", "FetchedRecord", "Judgement", "KeyResolver", "LogKeys", "LogView", "Material", "Need",
           "NeedReplay", "Policy", "RequirementResult", "StatusKey", "Verdict", "VerifyResult", "accept_credential",
           "accepting", "bad", "base", "capability_verdicts", "evaluate", "head_status", "inline_record", "instant",
           "judging", "list_owners", "load_policy", "may_replace", "offline_keys", "ok", "one_attestation", "order_key",
           "parse_require", "pinned_keys", "proof_only", "record_digests", "replay_credential", "sequence",
           "sequence_of", "skip", "status_url", "unmet", "with_attempts", "with_log_attempts"]
