"""eddsa-jcs-2022 against the official W3C vectors and the digitalbazaar cross-implementation vectors."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import b58decode, canonical
from acx_oci.crypto import dataintegrity as di
from acx_oci.trust import assertion_keys, load_identity


def _keys(vm: str) -> list[bytes]:
    return [k for _, k in assertion_keys(vm)]


def _load(p: Path) -> Any:
    return json.loads(p.read_text("utf-8"))


@pytest.fixture()
def ed(vectors: Path) -> Path:
    return vectors / "eddsa-jcs-2022"


def test_every_intermediate_matches_the_w3c_vector(ed: Path) -> None:
    unsigned = _load(ed / "unsigned.json")
    options = _load(ed / "proofConfigJCS.json")
    ident = load_identity(ed / "keyPair.json")
    assert canonical(unsigned) == (ed / "canonDocJCS.txt").read_bytes()
    assert hashlib.sha256(canonical(unsigned)).hexdigest() == (ed / "docHashJCS.txt").read_text()
    config = di.proof_configuration(unsigned, {k: v for k, v in options.items() if k != "@context"})
    assert config == options
    assert canonical(config) == (ed / "proofCanonJCS.txt").read_bytes()
    assert hashlib.sha256(canonical(config)).hexdigest() == (ed / "proofHashJCS.txt").read_text()
    combined = di.hash_data(unsigned, config)
    assert combined.hex() == (ed / "combinedHashJCS.txt").read_text()
    sig = ident.sign(combined)
    assert sig.hex() == (ed / "sigHexJCS.txt").read_text()
    proof = di.create_proof(unsigned, ident, options["verificationMethod"], options["created"])
    assert proof["proofValue"] == (ed / "sigBTC58JCS.txt").read_text()
    assert b58decode(proof["proofValue"]) == sig


def test_sign_reproduces_signed_vector(ed: Path) -> None:
    options = _load(ed / "proofConfigJCS.json")
    signed = di.sign(_load(ed / "unsigned.json"), load_identity(ed / "keyPair.json"),
                     options["verificationMethod"], options["created"])
    assert canonical(signed) == canonical(_load(ed / "signedJCS.json"))
    assert signed["proof"]["@context"] == signed["@context"]


@pytest.mark.parametrize("name", ["signed-ob3-achievement-credential.json",
                                  "signed-ob3-achievement-credential.proof-array.json",
                                  "signed-status-list-credential.json"])
def test_digitalbazaar_vectors_verify_and_reproduce(ed: Path, name: str) -> None:
    doc = _load(ed / "generated-by-digitalbazaar" / name)
    assert di.all_ok(di.verify(doc, _keys))
    unsigned_name = "unsigned-status-list-credential.json" if "status" in name else \
        "unsigned-ob3-achievement-credential.json"
    proof = di.proofs_of(doc)[0]
    again = di.sign(_load(ed / "generated-by-digitalbazaar" / unsigned_name), load_identity(ed / "keyPair.json"),
                    proof["verificationMethod"], proof["created"], as_array=isinstance(doc["proof"], list))
    assert canonical(again) == canonical(doc)


def test_one_character_changed_fails(ed: Path) -> None:
    doc = _load(ed / "signedJCS.json")
    doc["credentialSubject"]["alumniOf"] = doc["credentialSubject"]["alumniOf"][:-1] + "X"
    results = di.verify(doc, _keys)
    assert not di.all_ok(results) and results[0].code == "proof_invalid"


def _signed(ed: Path) -> dict[str, Any]:
    d: dict[str, Any] = _load(ed / "signedJCS.json")
    return d


@pytest.mark.parametrize("mutate", [
    lambda p: p.__setitem__("cryptosuite", "eddsa-rdfc-2022"),
    lambda p: p.__setitem__("type", "Ed25519Signature2020"),
    lambda p: p.__delitem__("@context"),
    lambda p: p.__setitem__("proofPurpose", "authentication"),
    lambda p: p.__setitem__("created", "2023-02-24T23:36:39Z"),
    lambda p: p.__setitem__("proofValue", "z" + "1" * 20),
    lambda p: p.__setitem__("proofValue", "not-multibase"),
    lambda p: p.__delitem__("proofValue"),
    lambda p: p.__setitem__("verificationMethod",
                            "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"
                            "#z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"),
])
def test_altered_proofs_fail(ed: Path, mutate: Any) -> None:
    doc = _signed(ed)
    mutate(doc["proof"])
    results = di.verify(doc, _keys)
    assert not di.all_ok(results)


def test_document_context_must_start_with_proof_context(ed: Path) -> None:
    doc = _signed(ed)
    doc["@context"] = list(reversed(doc["@context"]))
    assert di.verify(doc, _keys)[0].code == "proof_invalid"


def test_no_proof_and_proof_sets(ed: Path) -> None:
    unsigned = _load(ed / "unsigned.json")
    assert di.verify(unsigned, _keys)[0].code == "proof_missing"
    ident = load_identity(ed / "keyPair.json")
    once = di.sign(unsigned, ident, ident.verification_method, "2024-01-01T00:00:00Z")
    twice = di.sign(once, ident, ident.verification_method, "2024-01-02T00:00:00Z")
    assert isinstance(twice["proof"], list) and len(twice["proof"]) == 2
    assert di.all_ok(di.verify(twice, _keys))
    broken = copy.deepcopy(twice)
    broken["proof"][1]["proofValue"] = broken["proof"][0]["proofValue"]
    assert not di.all_ok(di.verify(broken, _keys))


def test_cryptosuite_table_and_bad_inputs(ed: Path) -> None:
    assert "eddsa-jcs-2022" in di.CRYPTOSUITES
    ident = load_identity(ed / "keyPair.json")
    from acx_oci.errors import UsageError
    with pytest.raises(UsageError):
        di.create_proof({"a": 1}, ident, ident.verification_method, "yesterday")
    with pytest.raises(UsageError):
        di.create_proof({"a": 1}, ident, ident.verification_method, None, cryptosuite="ecdsa-jcs-2019")


def test_unresolvable_method_reports_its_code(ed: Path) -> None:
    doc = _signed(ed)
    doc["proof"]["verificationMethod"] = "did:web:nowhere.example#key-1"
    results = di.verify(doc, _keys)
    assert results[0].code == "did_unresolvable"
