"""An exam certified under a relaxation (issue 46: tests that tell no two probes apart) says so in the
certification and in every credential off it, and a consumer's trust file can refuse such levels.

Fails on 8c6af49: no credential named its exams' relaxations and no trust file key refused them."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from acx_oci import reasons
from acx_oci.errors import UsageError
from acx_oci.evaluation.verify import verify_level_credential
from acx_oci.services.artifacts.certification import relaxations_claim, relaxations_of, summary_predicate
from acx_oci.services.exams.controls import NOT_DISTINGUISHED
from acx_oci.trust import load_trust

from ..support.forgery_world import World, make_world

CERTIFIED = {"acx:solver": "rom", "acx:examCertification": "certified",
             "acx:examCertificationDigest": "sha256:" + "3" * 64, "acx:examCertifier": "did:web:certifier.example"}


def _record(exam: str, grader: dict[str, Any]) -> dict[str, Any]:
    return {"exam": exam, "digest": "sha256:" + "1" * 64, "certified": True, "allOk": True, "impossible": False,
            "stages": {"seed": {"ok": True}, "grader": {"ok": True, **grader},
                       "freeze": {"ok": True, "freezeHash": "sha256:" + "2" * 64}}}


def test_the_certification_names_each_exams_relaxations() -> None:
    loose = _record("loose", {"controlsDistinguished": False, "relaxations": [NOT_DISTINGUISHED]})
    strict = _record("strict", {"controlsDistinguished": True, "distinguishedBy": "failingTests"})
    assert relaxations_of(loose) == [NOT_DISTINGUISHED] and relaxations_of(strict) == []
    pred = summary_predicate("b", "1", "sha256:" + "4" * 64, "did:web:c.example", {"loose": loose, "strict": strict})
    assert pred["exams"]["loose"]["relaxations"] == [NOT_DISTINGUISHED] and pred["exams"]["strict"]["relaxations"] == []
    assert relaxations_claim(pred, ["strict"]) == [] and relaxations_claim(pred, ["strict", "loose"]) == [
        NOT_DISTINGUISHED]
    assert relaxations_claim({"exams": {"old": {"certified": True}}}, ["old"]) == []  # an older certification


def _cred(w: World, **result: Any) -> dict[str, Any]:
    cred = copy.deepcopy(w.unsigned)
    cred["credentialSubject"]["result"][0].update(result)
    return w.resign(cred)


def test_a_trust_file_can_refuse_levels_on_relaxed_exams() -> None:
    w = make_world()
    relaxed = _cred(w, **CERTIFIED, **{"acx:examRelaxations": [NOT_DISTINGUISHED]})
    default = verify_level_credential(relaxed, w.ctx())
    assert not any(c.name == "exam_relaxations" for c in default.checks)  # accepted by default
    refusing = replace(w.trust, refused_relaxations=(NOT_DISTINGUISHED,))
    refused = verify_level_credential(relaxed, w.ctx(trust=refusing))
    assert not refused.verified and reasons.EXAM_RELAXATION_REFUSED in refused.codes
    clean = verify_level_credential(_cred(w, **CERTIFIED, **{"acx:examRelaxations": []}), w.ctx(trust=refusing))
    assert next(c for c in clean.checks if c.name == "exam_relaxations").ok
    silent = verify_level_credential(_cred(w, **CERTIFIED), w.ctx(trust=refusing))  # issued before: says nothing
    assert reasons.EXAM_RELAXATION_REFUSED in silent.codes
    msg = next(c for c in silent.checks if c.name == "exam_relaxations").message
    assert "does not say which" in msg


def test_the_trust_file_key(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("examRelaxations: {refuse: [controlsNotDistinguished]}\n")
    assert load_trust(tmp_path / "t.yaml").refused_relaxations == (NOT_DISTINGUISHED,)
    (tmp_path / "e.yaml").write_text("{}\n")
    assert load_trust(tmp_path / "e.yaml").refused_relaxations == ()
    (tmp_path / "b.yaml").write_text("examRelaxations: {refuse: controlsNotDistinguished}\n")
    with pytest.raises(UsageError, match="examRelaxations"):
        load_trust(tmp_path / "b.yaml")
