"""Classifications are stated up front (issue 34, Build 5; issue 44.3): ``exam import`` refuses without one, a
contract that says ``not stated`` never certifies and ``benchmark push`` refuses it; the certification and the
credential carry what was stated; ``classification: {required: true}`` in the trust file refuses a level whose
exams' classifications were not all stated (older credentials say ``not stated``).

Real git repositories, the real contract schema, signed credentials and real verification (no registry).
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from acx_oci import reasons
from acx_oci.errors import UsageError
from acx_oci.evaluation.verify import verify_level_credential
from acx_oci.model import exam as mx
from acx_oci.model import exam_record as xr
from acx_oci.services.artifacts.certification import classification_claim
from acx_oci.trust import load_trust

from ..support.cli import cli
from ..support.forgery_world import World, make_world
from ..support.jsondoc import check_document
from .test_exam_import import make_repo

FAMILIES = {"families": {"imported": "active"}}


def _import(tmp: Path, exam_id: str, *extra: str) -> dict[str, Any]:
    shas = make_repo(tmp / f"repo-{exam_id}")
    res = cli("exam", "import", "--repo", tmp / f"repo-{exam_id}", "--base", shas["base"], "--fix", shas["fix"],
              "--id", exam_id, "-o", tmp / "suite", "--json", *extra)
    (exam,) = check_document("exam import", res.stdout, res.exit_code)["exams"]
    contract = json.loads((Path(exam["dir"]) / "exam.yaml").read_text())
    return {"summary": exam, "contract": contract, "facts": mx.contract_facts(contract, FAMILIES)}


def test_an_import_without_a_classification_is_refused_and_an_unstated_contract_never_certifies(
        tmp_path: Path) -> None:
    shas = make_repo(tmp_path / "repo")
    silent = cli("exam", "import", "--repo", tmp_path / "repo", "--base", shas["base"], "--fix", shas["fix"],
                 "-o", tmp_path / "suite")
    assert silent.exit_code == 2 and "--classification public, private or customer:NAME" in silent.output
    assert "Traceback" not in silent.output and not (tmp_path / "suite").exists()  # nothing written
    # a contract written by hand (or by an older import) that says "not stated": the seed stage refuses it
    stated = _import(tmp_path, "stated", "--classification", "private")
    unstated = mx.contract_facts({**stated["contract"], "classification": mx.NOT_STATED}, FAMILIES)
    assert unstated["schemaValid"] and unstated["classificationStated"] is False and unstated["ok"] is False
    want = {"publiclyListable": False, "customerOwned": False}
    assert stated["contract"]["classification"] == want == stated["facts"]["classification"]
    assert stated["facts"]["ok"] and stated["facts"]["classificationStated"]
    predicate = {"exams": {"stated": {"certified": True,
                                      "classification": xr.classification_of({"stages": {"seed": stated["facts"]}})}}}
    assert classification_claim(predicate, ["stated"]) == "stated"
    # older certifications (before classifications were stated) still read, as not stated
    predicate["exams"]["old"] = {"certified": True, "classification": mx.NOT_STATED}
    assert classification_claim(predicate, ["stated", "old"]) == "not stated"  # one unstated exam is enough
    assert classification_claim({"exams": {"old": {"certified": True}}}, ["old"]) == "not stated"

    bad = cli("exam", "import", "--repo", tmp_path / "repo", "--base", "HEAD", "--fix", "HEAD",
              "--classification", "secret", "-o", tmp_path / "suite2")
    assert bad.exit_code == 2 and "public, private or customer:NAME" in bad.output
    assert not (tmp_path / "suite2").exists()


def test_benchmark_push_refuses_an_exam_that_states_no_classification(tmp_path: Path) -> None:
    _import(tmp_path, "stated", "--classification", "public")
    contract = tmp_path / "suite" / "tasks" / "stated" / "exam.yaml"
    doc = json.loads(contract.read_text())
    contract.write_text(json.dumps({**doc, "classification": mx.NOT_STATED}))
    assert cli("keygen", tmp_path / "verifier").exit_code == 0
    res = cli("benchmark", "push", tmp_path / "suite", f"oci:{tmp_path / 'layout'}:b", "--seal-to",
              tmp_path / "verifier.did.json", "--allow-uncertified")
    assert res.exit_code == 2 and "states no classification" in res.output, res.output
    index = tmp_path / "layout" / "index.json"
    assert not index.exists() or json.loads(index.read_text()).get("manifests") == []  # nothing pushed


def _cred(w: World, **result: Any) -> dict[str, Any]:
    cred = copy.deepcopy(w.unsigned)
    cred["credentialSubject"]["result"][0].update(result)
    return w.resign(cred)


CERTIFIED = {"acx:solver": "rom", "acx:examCertification": "certified",
             "acx:examCertificationDigest": "sha256:" + "3" * 64, "acx:examCertifier": "did:web:certifier.example"}


def test_a_trust_file_can_require_stated_classifications() -> None:
    w = make_world()
    unstated = _cred(w, **CERTIFIED, **{"acx:examClassification": "not stated"})
    default = verify_level_credential(unstated, w.ctx())
    assert not any(c.name == "classification" for c in default.checks)  # the default is unchanged
    required = replace(w.trust, classification_required=True)
    refused = verify_level_credential(unstated, w.ctx(trust=required))
    assert not refused.verified and reasons.CLASSIFICATION_UNSTATED in refused.codes
    stated = verify_level_credential(_cred(w, **CERTIFIED, **{"acx:examClassification": "stated"}),
                                     w.ctx(trust=required))
    assert next(c for c in stated.checks if c.name == "classification").ok
    silent = verify_level_credential(_cred(w, **CERTIFIED), w.ctx(trust=required))  # says nothing: not stated
    assert reasons.CLASSIFICATION_UNSTATED in silent.codes


def test_the_trust_file_key(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("classification: {required: true}\n")
    assert load_trust(tmp_path / "t.yaml").classification_required
    (tmp_path / "e.yaml").write_text("{}\n")
    assert not load_trust(tmp_path / "e.yaml").classification_required
    (tmp_path / "b.yaml").write_text("classification: {required: maybe}\n")
    with pytest.raises(UsageError, match="classification"):
        load_trust(tmp_path / "b.yaml")
