"""The issued level credential validates against the OB 3.0 AchievementCredential and VC 2.0 JSON Schemas."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from acx_oci.crypto import canonical
from acx_oci.errors import UsageError
from acx_oci.model import credential

from ..support.forgery_world import ISSUED, make_world


def _validate(vectors: Path, rel: str, doc: Any) -> list[str]:
    schema = json.loads((vectors / rel).read_text())
    cls = jsonschema.validators.validator_for(schema)
    return [e.message for e in cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(doc)]


def test_issued_credential_validates_against_ob3_and_vc2_schemas(vectors: Path) -> None:
    cred = make_world().signed
    assert _validate(vectors, "ob3/json-schema/achievementcredential.json", cred) == []
    assert _validate(vectors, "vc2/verifiable-credential-schema.json", cred) == []


def test_schemas_are_not_vacuous(vectors: Path) -> None:
    cred = make_world().signed
    single = {**cred, "proof": cred["proof"][0]}
    assert _validate(vectors, "ob3/json-schema/achievementcredential.json", single)  # OB 3.0 wants an array
    no_status_id = {**cred, "credentialStatus": {k: v for k, v in cred["credentialStatus"].items() if k != "id"}}
    assert _validate(vectors, "ob3/json-schema/achievementcredential.json", no_status_id)


def test_every_design_field_is_present() -> None:
    cred = make_world().signed
    assert cred["@context"] == [credential.VC_V2_CONTEXT, credential.OB_CONTEXT, credential.ACX_LEVEL_CONTEXT]
    assert cred["type"] == ["VerifiableCredential", "OpenBadgeCredential"]
    assert cred["id"].startswith("urn:uuid:") and len(cred["id"]) == 45
    assert cred["validFrom"] == "2026-07-01T12:00:00Z" and "validUntil" in cred
    res = credential.level_result(cred)
    assert res is not None
    for key in ("acx:ratingMu", "acx:ratingSigma", "acx:gamesPlayed", "acx:acxLevel", "acx:careerTier",
                "acx:passRate", "acx:cartridgeRomDigest", "acx:benchmarkId", "acx:benchmarkVersion",
                "acx:benchmarkDigest", "acx:heldOutSliceDigest", "acx:capabilityId", "acx:cartridgeManifestDigest"):
        assert key in res, key
    assert isinstance(res["acx:ratingMu"], float) and res["acx:ratingMu"] == 33.0312  # unrounded
    assert res["type"] == ["Result"]
    assert all("Evidence" in e["type"] for e in cred["evidence"])
    assert "acx:dsseEnvelope" in cred["evidence"][0] and "acx:dsseEnvelope" not in cred["evidence"][1]
    status = cred["credentialStatus"]
    assert status["type"] == "BitstringStatusListEntry" and status["id"] and isinstance(status["statusListIndex"], str)
    assert isinstance(cred["proof"], list) and cred["proof"][0]["cryptosuite"] == "eddsa-jcs-2022"
    assert cred["proof"][0]["proofPurpose"] == "assertionMethod"


def test_two_credentials_get_different_ids() -> None:
    assert make_world().signed["id"] != make_world().signed["id"]


def test_level_rule_matches_design() -> None:
    assert credential.level_for(33.03, 1.232) == (29, "principal")
    assert credential.level_for(10.0, 1.5) == (6, "junior")  # R = 5.5 rounds half up
    assert credential.level_for(1.0, 2.0) == (0, "intern")


def test_builder_refuses_bad_input() -> None:
    w = make_world()
    base: dict[str, Any] = {
        "issuer_did": "did:web:v.example", "subject_id": "urn:x", "capability_id": "c", "rating_mu": 30.0,
        "rating_sigma": 1.0, "games_played": 90, "acx_level": 27, "career_tier": "principal", "pass_rate": 0.5,
        "rom_digest": "sha256:" + "1" * 64, "manifest_digest": "sha256:" + "2" * 64, "benchmark_id": "b",
        "benchmark_version": "1", "benchmark_digest": "sha256:" + "3" * 64,
        "held_out_slice_digest": "sha256:" + "4" * 64, "evidence": [w.signed["evidence"][1]],
        "status_entry": w.signed["credentialStatus"], "valid_from": ISSUED,
        "valid_until": ISSUED + timedelta(days=1), "achievement_name": "x"}
    credential.build_level_credential(credential.LevelClaim(previous_version="none", **base))
    for override in ({"rom_digest": "sha256:abc"}, {"valid_until": ISSUED}, {"status_entry": {"type": "x"}},
                     {"evidence": [{"type": ["Evidence"]}]}):
        with pytest.raises(UsageError):
            credential.build_level_credential(credential.LevelClaim(previous_version="none", **{**base, **override}))


def test_inline_evidence_must_match_its_bytes() -> None:
    env = {"payloadType": "t", "payload": "", "signatures": []}
    with pytest.raises(UsageError):
        credential.evidence_item(b"other bytes", inline=env)
    item = credential.evidence_item(canonical(env), game=3, inline=env)
    assert item["acx:game"] == 3 and credential.evidence_digest(item) == item["acx:digestMultibase"]


def test_builders_take_one_typed_claim() -> None:
    """Every ``build*``/``issue*`` takes at most five parameters and no ``**kwargs``: the claim is a typed value."""
    import dataclasses
    import inspect

    found = {name: fn for name, fn in vars(credential).items()
             if (name.startswith("build") or name.startswith("issue")) and inspect.isfunction(fn)
             and fn.__module__ == credential.__name__}
    assert {"build_level_credential", "issue"} <= set(found)
    for name, fn in found.items():
        params = inspect.signature(fn).parameters.values()
        assert len(params) <= 5, name
        assert all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in params), name
    assert dataclasses.is_dataclass(credential.LevelClaim)
    assert credential.LevelClaim.__dataclass_params__.frozen  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        credential.LevelClaim(issuer_did="x", rating=30.0)  # type: ignore[call-arg]  # a misspelt field fails
