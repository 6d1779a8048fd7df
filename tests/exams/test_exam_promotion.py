"""Promotion is visible and requirable (issue 44.4): the certification says which exams were imported and
promoted, the credential counts them (``acx:examPromotion``), and a consumer refuses a level on imported exams
that were not graded in their pinned images unless the trust file says ``promotion: {required: false}``;
``{required: true}`` asks it of every exam. Signed credentials, real verification (no registry)."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from acx_oci import reasons
from acx_oci.errors import UsageError
from acx_oci.evaluation.verify import verify_level_credential
from acx_oci.jsonio import first_error
from acx_oci.services.artifacts.certification import promotion_claim, summary_predicate
from acx_oci.trust import load_trust

from ..support.forgery_world import World, make_world

CERTIFIED = {"acx:solver": "rom", "acx:examCertification": "certified",
             "acx:examCertificationDigest": "sha256:" + "3" * 64, "acx:examCertifier": "did:web:certifier.example"}


def _cred(w: World, **result: Any) -> dict[str, Any]:
    cred = copy.deepcopy(w.unsigned)
    cred["credentialSubject"]["result"][0].update(result)
    return w.resign(cred)


def _record(promoted: bool, parent: str | None) -> dict[str, Any]:
    freeze: dict[str, Any] = {"freezeHash": "sha256:" + "1" * 64, **({"parentCommit": parent} if parent else {})}
    return {"digest": "sha256:" + "2" * 64, "certified": True, "allOk": promoted,
            "stages": {"freeze": {"ok": True, **freeze}, "promotion": {"ok": promoted}, "eval": {"ok": True},
                       "seed": {"ok": True}}}


def test_the_certification_and_the_credential_count_promoted_and_imported_exams() -> None:
    pred = summary_predicate("b", "1", "sha256:" + "0" * 64, "did:web:c.example", {
        "hand": _record(False, None), "imp-in-image": _record(True, "a" * 40), "imp-on-host": _record(False, "b" * 40)})
    assert {k: (e["imported"], e["promoted"]) for k, e in pred["exams"].items()} == {
        "hand": (False, False), "imp-in-image": (True, True), "imp-on-host": (True, False)}
    assert promotion_claim(pred, ["hand", "imp-in-image", "imp-on-host"]) == {
        "exams": 3, "promoted": 1, "imported": 2, "importedUnpromoted": 1}
    assert promotion_claim(pred, ["hand", "imp-in-image"])["importedUnpromoted"] == 0  # the held-out slice only
    old = {"exams": {"x": {"certified": True, "promoted": False}}}  # a certification from before "imported"
    assert promotion_claim(old, ["x"]) == {"exams": 1, "promoted": 0, "imported": 0, "importedUnpromoted": 0}


def test_imported_exams_unpromoted_are_refused_by_default_and_the_trust_file_decides() -> None:
    w = make_world()
    on_host = _cred(w, **CERTIFIED, **{"acx:examPromotion": {"exams": 3, "promoted": 1, "imported": 2,
                                                             "importedUnpromoted": 1}})
    default = verify_level_credential(on_host, w.ctx())
    assert not default.verified and reasons.EXAMS_UNPROMOTED in default.codes
    relaxed = verify_level_credential(on_host, w.ctx(trust=replace(w.trust, promotion_required=False)))
    check = next(c for c in relaxed.checks if c.name == "promotion")
    assert check.ok and check.code == "relaxed" and "promotion: {required: false}" in check.message
    # every imported exam in its image: the default accepts; {required: true} still wants the hand-made ones
    in_images = _cred(w, **CERTIFIED, **{"acx:examPromotion": {"exams": 3, "promoted": 2, "imported": 2,
                                                               "importedUnpromoted": 0}})
    assert next(c for c in verify_level_credential(in_images, w.ctx()).checks if c.name == "promotion").ok
    strict = w.ctx(trust=replace(w.trust, promotion_required=True))
    assert reasons.EXAMS_UNPROMOTED in verify_level_credential(in_images, strict).codes
    every = _cred(w, **CERTIFIED, **{"acx:examPromotion": {"exams": 3, "promoted": 3, "imported": 2,
                                                           "importedUnpromoted": 0}})
    assert next(c for c in verify_level_credential(every, strict).checks if c.name == "promotion").ok
    # a credential from before it said: accepted by default (old levels still verify), refused when required
    silent = _cred(w, **CERTIFIED)
    assert not any(c.name == "promotion" for c in verify_level_credential(silent, w.ctx()).checks)
    assert reasons.EXAMS_UNPROMOTED in verify_level_credential(silent, strict).codes


def test_the_trust_file_key_and_the_credential_schema(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("promotion: {required: true}\n")
    assert load_trust(tmp_path / "t.yaml").promotion_required is True
    (tmp_path / "f.yaml").write_text("promotion: {required: false}\n")
    assert load_trust(tmp_path / "f.yaml").promotion_required is False
    (tmp_path / "e.yaml").write_text("{}\n")
    assert load_trust(tmp_path / "e.yaml").promotion_required is None
    (tmp_path / "b.yaml").write_text("promotion: {required: yes please}\n")
    with pytest.raises(UsageError, match="promotion"):
        load_trust(tmp_path / "b.yaml")
    w = make_world()
    bad = _cred(w, **CERTIFIED, **{"acx:examPromotion": {"exams": -1, "promoted": 0, "imported": 0,
                                                         "importedUnpromoted": 0}})
    assert first_error(bad, "level-credential.schema.json") is not None
