"""The certification record in the seed's shape: stage names, flags, the eval stage, and the old shape still read."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from acx_oci.errors import AcxError
from acx_oci.jsonio import first_error
from acx_oci.model import exam as mx
from acx_oci.model import exam_record as xr
from acx_oci.services import exams as ex
from acx_oci.services.exams.evaluation import evaluate
from acx_oci.services.exams.source import load_exam

from ..conftest import TESTDATA

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
SEED_FLAGS = {"gold": {"promotionEligible", "isolated"},
              "grader": {"promotionEligible", "isolated", "controlsDistinguished"},
              "attack": {"promotionEligible", "trivialExploits", "passedForPromotion", "goldStillPassesAfterSuite"},
              "eval": {"promotionEligible"}}


@pytest.fixture(scope="module")
def one(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, xr.CertificationRecord]:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    out = tmp_path_factory.mktemp("cert-one")
    events: list[tuple[str, str, int, int]] = []
    (rec,) = ex.certify_suite(TESTDATA / "exams-good" / "tasks" / "fx-0001", jobs=1, out=out,
                              stages=lambda *e: events.append(e))
    (out / "stage-events.json").write_text(json.dumps(events))  # for the stage-report test below
    return out, rec


def _v1_record() -> dict[str, Any]:
    """A record exactly as the first shape wrote it: ``contract``, no ``eval``, no seed flags."""
    stages: dict[str, dict[str, Any]] = {s: {"ok": True} for s in mx.STAGES_V1}
    stages["grader"] = {"ok": True, "controls": dict(mx.EXPECTED), "distinguished": True}
    stages["freeze"] = {"ok": True, "freezeHash": "sha256:" + "0" * 64, "imageDigest": None}
    stages["promotion"] = dict(mx.NO_IMAGE)
    rec: dict[str, Any] = {"schema": mx.RECORD_SCHEMA_V1, "exam": "old-1", "version": "1", "impossible": False,
                           "certifier": "acx-oci-exam-certify/1", "stages": stages, "allOk": False,
                           "certified": True}
    rec["digest"] = xr.record_digest(rec)
    return rec


@needs_bwrap
def test_record_carries_the_seed_stages_and_flags_and_validates(one: tuple[Path, xr.CertificationRecord]) -> None:
    _, rec = one
    assert rec["schema"] == mx.RECORD_SCHEMA and first_error(rec.to_json(), mx.RECORD_SCHEMA_FILE) is None
    assert xr.check_record(rec) == []
    assert {"seed", "gold", "grader", "attack", "eval"} <= set(rec["stages"]) and "contract" not in rec["stages"]
    for stage, flags in SEED_FLAGS.items():
        assert flags <= set(rec["stages"][stage]), stage
    st = rec["stages"]
    assert st["gold"]["isolated"] is True and st["gold"]["promotionEligible"] is True
    assert st["grader"]["controlsDistinguished"] is True
    assert st["attack"]["trivialExploits"] == [] and st["attack"]["goldStillPassesAfterSuite"] is True
    assert st["attack"]["passedForPromotion"] is False  # no image: the suite never ran for promotion
    assert st["eval"]["plays"] == {"untouched": "model-fail", "gold": "certified-pass",
                                   "incomplete": "model-fail", "lookalike": "model-fail"}
    assert st["eval"]["ok"] and st["eval"]["containmentProven"] and st["eval"]["solver"] == "rom"
    assert rec["certified"] is True and rec["allOk"] is False  # promotion not run


@needs_bwrap
@needs_bwrap
def test_each_stage_is_reported_as_it_starts_in_order(one: tuple[Path, xr.CertificationRecord]) -> None:
    """What the status line and ``--json-events`` show: (exam, stage, step, of), then ``finished`` (issue 37)."""
    out, _ = one
    events = [tuple(e) for e in json.loads((out / "stage-events.json").read_text())]
    assert {e[0] for e in events} == {"fx-0001"} and events[-1] == ("fx-0001", ex.FINISHED, 1, 1)
    stages = [e[1:] for e in events[:-1]]
    assert list(dict.fromkeys(s for s, _, _ in stages)) == ["contract", "gold", "controls", "attack", "eval",
                                                           "canary", "publication", "freeze"]
    assert [(n, of) for s, n, of in stages if s == "gold"] == [(1, 1)]  # hand-made controls: one gold run
    assert [(n, of) for s, n, of in stages if s == "controls"] == [(i, 5) for i in range(1, 6)]
    assert [(n, of) for s, n, of in stages if s == "eval"] == [(i, 4) for i in range(1, 5)]
    attack = [(n, of) for s, n, of in stages if s == "attack"]
    assert attack == [(i, len(attack)) for i in range(1, len(attack) + 1)] and len(attack) > 1


def test_schema_refuses_a_record_missing_a_flag(one: tuple[Path, xr.CertificationRecord]) -> None:
    _, rec = one
    for stage, flags in SEED_FLAGS.items():
        for flag in flags:
            bad = rec.to_json()
            del bad["stages"][stage][flag]
            bad["digest"] = xr.record_digest(bad)
            err = first_error(bad, mx.RECORD_SCHEMA_FILE)
            assert err is not None and flag in err.message, (stage, flag)
    lying = rec.to_json()
    lying["stages"]["eval"] = {**lying["stages"]["eval"], "ok": False}
    lying["allOk"], lying["certified"] = False, False
    lying["digest"] = xr.record_digest(lying)
    assert xr.check_record(lying) == ["eval.promotionEligible without eval.ok"]


def test_a_record_in_the_old_shape_is_still_read(tmp_path: Path) -> None:
    old = _v1_record()
    assert xr.check_record(old) == []
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "old-1.json").write_text(json.dumps(old))
    assert ex.load_records(tmp_path) == {"old-1": old}
    summary = ex.report(tmp_path)
    assert summary["certified"] == 1 and summary["stages"]["seed"] == {"ok": 1, "failed": 0}
    assert summary["stages"]["eval"] == {"ok": 0, "failed": 0}  # the old shape had no evaluation
    failed = {**old, "stages": {**old["stages"], "contract": {"ok": False, "familyActive": False}},
              "certified": False}
    failed["digest"] = xr.record_digest(failed)
    assert xr.check_record(failed) == [] and xr.failures(failed) == [("seed", "familyActive")]
    tampered = {**old, "certified": False}
    assert any("digest" in p for p in xr.check_record(tampered))


@needs_bwrap
def test_eval_plays_through_the_rom_solver_and_catches_a_wrong_reference() -> None:
    src = load_exam(TESTDATA / "exams-good" / "tasks" / "fx-0002")
    broken = dataclasses.replace(src, reference=dict(src.controls["lookalike"]))  # a near miss as "gold"
    facts = evaluate(broken, None, ())
    assert facts["ok"] is False and facts["promotionEligible"] is False
    assert facts["plays"]["gold"] == "model-fail" and "hidden tests failed" in facts["unexpected"]["gold"]


@needs_bwrap
def test_the_signed_summary_says_which_exams_were_evaluated(one: tuple[Path, xr.CertificationRecord]) -> None:
    from acx_oci.services.artifacts.certification import summary_predicate

    _, rec = one
    old = _v1_record()
    pred = summary_predicate("b", "1", "sha256:" + "1" * 64, "did:web:c.example",
                             {rec.exam: rec.to_json(), "old-1": old})
    assert pred["exams"][rec["exam"]]["evaluated"] is True and pred["exams"]["old-1"]["evaluated"] is False
    assert pred["exams"][rec["exam"]]["allOk"] is False and pred["summary"]["stages"]["eval"]["ok"] == 1


def test_a_record_is_a_type_made_once_checked_once_and_never_changed_after() -> None:
    """The stages seal a record and a reader loads one; nothing else makes one, nothing reached through it
    changes it, and what is written is the JSON it was sealed as (the digest still holds)."""
    stages: dict[str, Any] = {s: xr.skipped(s, "seed (contract) failed") for s in mx.STAGES}
    stages["seed"] = {"ok": False, "familyActive": False}
    stages["promotion"] = dict(mx.NO_IMAGE)
    rec = xr.CertificationRecord.seal("x-1", "1", stages, impossible=False)
    assert not rec.certified and rec.exam == "x-1" and rec.failures() == [("seed", "familyActive")]
    doc = rec.to_json()
    assert doc["digest"] == xr.record_digest(doc) == rec.digest and xr.check_record(doc) == []
    assert xr.CertificationRecord.load(json.loads(json.dumps(doc))).to_json() == doc
    rec["stages"]["seed"]["ok"] = True  # a copy: the record is as it was sealed
    rec.stage("seed")["ok"] = True
    assert rec.failures() == [("seed", "familyActive")] and rec.to_json() == doc
    with pytest.raises(AttributeError):
        rec._doc = {}
    with pytest.raises(TypeError):
        xr.CertificationRecord(doc)  # taken on its word: never
    forged = {**doc, "certified": True}
    with pytest.raises(AcxError, match=r"where it was: .*certified does not match"):
        xr.CertificationRecord.load(forged, "where it was")
