"""The seeds' rules as defaults (issue 34.4): a trust file that says nothing refuses uncertified exams and a
model-calling agent's level without post-cutoff evidence; one line relaxes each, and the check says so; a
simulated level keeps the old rules; ``regression: required`` refuses a level with no regression check.

Signed credentials and real verification (tests/support/forgery_world), no registry.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from acx_oci import reasons
from acx_oci.errors import UsageError
from acx_oci.evaluation import Check
from acx_oci.evaluation.verify import verify_level_credential
from acx_oci.trust import PostCutoff, Trust, load_trust

from ..support.forgery_world import World, make_world

MODEL = {"id": "acme/model-1", "api": "openai-chat"}
NO_CUTOFF = {"cutoff": None, "source": None, "qualifying": 0, "drawn": 90}


def _cred(w: World, **result: Any) -> dict[str, Any]:
    cred = copy.deepcopy(w.unsigned)
    res = cred["credentialSubject"]["result"][0]
    res.update(result)
    return w.resign(cred)


def _check(w: World, cred: dict[str, Any], trust: Trust, name: str) -> Check:
    checks = verify_level_credential(cred, w.ctx(trust=trust)).checks
    return next(c for c in checks if c.name == name)


def test_uncertified_exams_are_refused_by_default_and_allowed_by_one_line() -> None:
    w = make_world()
    rom = _cred(w, **{"acx:solver": "rom", "acx:examCertification": "uncertified-allowed"})
    refused = _check(w, rom, w.trust, "exam_certification")
    assert not refused.ok and refused.code == reasons.EXAMS_UNCERTIFIED
    assert "uncertifiedExams: allow" in refused.message
    allowed = _check(w, rom, replace(w.trust, uncertified_exams=True), "exam_certification")
    assert allowed.ok and allowed.code == "relaxed" and "uncertifiedExams: allow" in allowed.message
    # a simulated level keeps today's rule: its suite is not in exam form, and says so
    sim = _cred(w, **{"acx:solver": "reference", "acx:examCertification": "not-exam-form"})
    kept = _check(w, sim, w.trust, "exam_certification")
    assert kept.ok and "simulated" in kept.message


def test_model_calling_level_without_post_cutoff_evidence_is_contamination_unproven() -> None:
    w = make_world()
    rom = _cred(w, **{"acx:solver": "rom", "acx:examCertification": "uncertified-allowed", "acx:model": MODEL,
                      "acx:postCutoff": NO_CUTOFF})
    trust = replace(w.trust, uncertified_exams=True)
    refused = _check(w, rom, trust, "post_cutoff")
    assert not refused.ok and refused.code == reasons.CONTAMINATION_UNPROVEN
    relaxed = _check(w, rom, replace(trust, post_cutoff=PostCutoff(required=False)), "post_cutoff")
    assert relaxed.ok and relaxed.code == "relaxed" and "postCutoff" in relaxed.message
    per_bench = replace(trust, benchmarks=[replace(b, post_cutoff=PostCutoff(required=False))
                                           for b in trust.benchmarks])
    assert _check(w, rom, per_bench, "post_cutoff").code == "relaxed"
    proven = _cred(w, **{"acx:solver": "rom", "acx:examCertification": "uncertified-allowed", "acx:model": MODEL,
                         "acx:postCutoff": {"cutoff": "2025-12-31", "source": "rom", "qualifying": 90, "drawn": 90}})
    assert _check(w, proven, trust, "post_cutoff").ok
    # an agent that calls no model, and a simulated level, need no post-cutoff evidence
    checks = verify_level_credential(_cred(w, **{"acx:solver": "reference", "acx:model": MODEL,
                                                 "acx:postCutoff": NO_CUTOFF}), w.ctx()).checks
    assert reasons.CONTAMINATION_UNPROVEN not in {c.code for c in checks}


def test_regression_required_refuses_a_level_without_a_baseline() -> None:
    w = make_world()
    plain = _cred(w)  # a first version: it says so (acx:previousVersion none), which the default accepts
    assert _check(w, plain, w.trust, "regression").ok
    required = replace(w.trust, regression_required=True)
    refused = _check(w, plain, required, "regression")
    assert not refused.ok and refused.code == reasons.REGRESSION_UNCHECKED
    based = _cred(w, **{"acx:baseline": {"credentialDigest": "sha256:" + "1" * 64, "romDigest": "sha256:" + "2" * 64,
                                         "heldOutR": 20.0, "heldInR": 20.0, "acceptIf": "no-regression"}})
    assert _check(w, based, required, "regression").ok


def test_trust_file_keys(tmp_path: Path) -> None:
    path = tmp_path / "trust.yaml"
    path.write_text("uncertifiedExams: allow\npostCutoff: {required: false}\nregression: required\n")
    trust = load_trust(path)
    assert trust.uncertified_exams and trust.regression_required
    assert trust.post_cutoff is not None and not trust.post_cutoff.required
    empty = load_trust(_write(tmp_path / "empty.yaml", "{}\n"))
    assert not empty.uncertified_exams and not empty.regression_required and empty.post_cutoff is None
    with pytest.raises(UsageError, match="uncertifiedExams"):
        load_trust(_write(tmp_path / "bad.yaml", "uncertifiedExams: yes-please\n"))


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
