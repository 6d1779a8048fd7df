"""The attempt record and the credential's attempt fields (the shared contract of issue 23), pure."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from acx_oci.crypto import generate_identity
from acx_oci.errors import SchemaError, UsageError
from acx_oci.jsonio import first_error
from acx_oci.model import attempt as am
from acx_oci.model import credential
from acx_oci.oci import model as oci_model

from ..support.forgery_world import ISSUED, make_world

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _record(**over: Any) -> am.AttemptRecord:
    base: dict[str, Any] = dict(
        issuer="did:web:v.example", valid_from=T0, cartridge_id="acme/dag", rom_digest="sha256:" + "1" * 64,
        cartridge_manifest_digest="sha256:" + "2" * 64, benchmark="build-dag@1", benchmark_digest="sha256:" + "3" * 64,
        capability="build-dag", attempt=am.AttemptCount(2, 1, T0 - timedelta(days=3)), verdict=am.VERDICT_NOT_ISSUED,
        reasons=(("gate_unmet", "gate: sigma 2.1 >= 1.5"),), mu=20.0, sigma=2.1, acx_level=14, games_played=12)
    return am.AttemptRecord(**{**base, **over})


def test_attempt_record_signs_parses_and_verifies() -> None:
    me = generate_identity()
    rec = _record(issuer=me.did)
    signed = am.sign_attempt_record(rec, me)
    assert first_error(signed, am.SCHEMA) is None
    assert signed["type"] == "AcxAttemptRecord" and signed["verdict"] == "not-issued"
    assert signed["attempt"] == {"sequence": 2, "previousAttempts": 1, "firstAttemptAt": "2026-11-27T12:00:00Z"}
    back = am.parse_attempt_record(signed)
    assert (back.acx_level, back.attempt, back.reasons) == (14, rec.attempt, rec.reasons)
    assert all(r.ok for r in am.verify_attempt_record(signed, lambda _vm: me.public_bytes))
    tampered = {**signed, "acxLevel": 30}
    assert not any(r.ok for r in am.verify_attempt_record(tampered, lambda _vm: me.public_bytes))
    assert am.record_bytes(signed) == am.record_bytes(dict(reversed(list(signed.items()))))
    assert oci_model.ARTIFACT_ATTEMPT_RECORD == "application/vnd.acx.attempt-record.v1"
    assert oci_model.MEDIA_ATTEMPT_RECORD == "application/vnd.acx.attempt-record.v1+json"


def test_attempt_record_refuses_what_it_must_not_say() -> None:
    with pytest.raises(UsageError):
        am.build_attempt_record(_record(verdict=am.VERDICT_ISSUED))  # issued needs its credential digest
    with pytest.raises(UsageError):
        am.build_attempt_record(_record(rom_digest="sha256:abc"))
    unplayed = am.build_attempt_record(_record(mu=None, sigma=None, acx_level=None, games_played=None))
    assert "mu" not in unplayed and "acxLevel" not in unplayed
    doc = am.build_attempt_record(_record())
    for bad in ({**doc, "verdict": "lucky"}, {**doc, "attempt": {"sequence": 0, "previousAttempts": 0,
                                                               "firstAttemptAt": "2026-01-01T00:00:00Z"}},
                {k: v for k, v in doc.items() if k != "capability"}):
        with pytest.raises(SchemaError):
            am.parse_attempt_record(bad)


def test_credential_carries_attempt_and_cooldown_scope() -> None:
    w = make_world()
    claim = credential.LevelClaim(previous_version="none",
        issuer_did="did:web:v.example", subject_id="urn:x", capability_id="c", rating_mu=30.0, rating_sigma=1.0,
        games_played=90, acx_level=27, career_tier="principal", pass_rate=0.5, rom_digest="sha256:" + "1" * 64,
        manifest_digest="sha256:" + "2" * 64, benchmark_id="b", benchmark_version="1",
        benchmark_digest="sha256:" + "3" * 64, held_out_slice_digest="sha256:" + "4" * 64,
        evidence=[w.signed["evidence"][1]], status_entry=w.signed["credentialStatus"], valid_from=ISSUED,
        valid_until=ISSUED + timedelta(days=1), achievement_name="x",
        attempt=am.AttemptCount(3, 2, ISSUED - timedelta(days=2)), cooldown_scope=am.SCOPE_ROM)
    doc = credential.issue(claim, generate_identity())
    res = credential.level_result(doc) or {}
    assert res["acx:cooldownScope"] == "rom" and res["acx:attempt"]["sequence"] == 3
    assert credential.credential_attempt(doc) == claim.attempt
    assert first_error(doc, "level-credential.schema.json") is None
    res["acx:cooldownScope"] = "none"
    assert first_error(doc, "level-credential.schema.json") is not None
    with pytest.raises(UsageError):
        credential.build_level_credential(replace(claim, cooldown_scope="forever"))
    assert credential.credential_attempt(w.signed) is None  # a credential from before attempts counted
