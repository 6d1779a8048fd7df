"""Forged or altered level credentials: each is rejected with its reason code; a valid one passes.

Forgeries that need a valid signature are re-signed with the trusted
verifier's own key, so each row tests exactly one rule and not the proof.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from acx_oci.crypto import canonical, dataintegrity
from acx_oci.evaluation import VerifyResult
from acx_oci.evaluation.checks import VerifyContext
from acx_oci.evaluation.verify import verify_level_credential
from acx_oci.model import credential, statuslist

from ..support.forgery_world import ISSUED, LIST_URL, SUBJECT, VERIFIER_DID, World, game_envelope, make_world


@pytest.fixture(scope="module")
def world() -> World:
    return make_world()


def _result(cred: dict[str, Any]) -> dict[str, Any]:
    r = credential.level_result(cred)
    assert r is not None
    return r


Forgery = Callable[[World], tuple[dict[str, Any], VerifyContext]]


def _edit(w: World, edit: Callable[[dict[str, Any]], None], resign: bool = True) -> dict[str, Any]:
    cred = copy.deepcopy(w.signed if not resign else w.unsigned)
    edit(cred)
    return w.resign(cred) if resign else cred


def self_issued_subject(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return _edit(w, lambda c: c["credentialSubject"].__setitem__("id", VERIFIER_DID)), w.ctx()


def self_issued_by_controller(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return w.signed, w.ctx(cartridge_controller=VERIFIER_DID)


def self_issued_by_rom_signer(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return w.signed, w.ctx(rom_signer=VERIFIER_DID + "#key-1")


def wrong_rom(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return w.signed, w.ctx(expected_rom_digest="sha256:" + "9" * 64)


def wrong_manifest(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return w.signed, w.ctx(expected_manifest_digest="sha256:" + "8" * 64)


def sigma_too_high(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return _edit(w, lambda c: _result(c).__setitem__("acx:ratingSigma", 1.5)), w.ctx()


def too_few_games(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return _edit(w, lambda c: _result(c).__setitem__("acx:gamesPlayed", 29)), w.ctx()


def revoked(w: World) -> tuple[dict[str, Any], VerifyContext]:
    lst = statuslist.sign_status_list(statuslist.with_bit(w.status_list, w.index, True, valid_from=ISSUED),
                                      w.verifier, w.verifier.verification_method, ISSUED)
    return w.signed, w.ctx(status_list=lst)


def expired(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return w.signed, w.ctx(now=ISSUED + timedelta(days=366), trust=replace(w.trust, status_max_age=None))


def not_yet_valid(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return w.signed, w.ctx(now=ISSUED - timedelta(hours=1))


def untrusted_issuer(w: World) -> tuple[dict[str, Any], VerifyContext]:
    def edit(c: dict[str, Any]) -> None:
        c["issuer"]["id"] = w.stranger.did
    cred = copy.deepcopy(w.unsigned)
    edit(cred)
    return w.resign(cred, w.stranger), w.ctx()


def method_not_in_assertion(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return w.resign(w.unsigned, w.stray, f"{VERIFIER_DID}#key-3"), w.ctx()


def proof_value_altered(w: World) -> tuple[dict[str, Any], VerifyContext]:
    cred = copy.deepcopy(w.signed)
    pv = cred["proof"][0]["proofValue"]
    cred["proof"][0]["proofValue"] = pv[:-2] + ("A" if pv[-2] != "A" else "B") + pv[-1]
    return cred, w.ctx()


def cryptosuite_swapped(w: World) -> tuple[dict[str, Any], VerifyContext]:
    cred = copy.deepcopy(w.signed)
    cred["proof"][0]["cryptosuite"] = "eddsa-rdfc-2022"
    return cred, w.ctx()


def benchmark_not_accepted(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return _edit(w, lambda c: _result(c).__setitem__("acx:benchmarkDigest", "sha256:" + "5" * 64)), w.ctx()


def benchmark_version_unknown(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return _edit(w, lambda c: _result(c).__setitem__("acx:benchmarkVersion", "2025.01.1")), w.ctx()


def held_out_mismatch(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return _edit(w, lambda c: _result(c).__setitem__("acx:heldOutSliceDigest", "sha256:" + "6" * 64)), w.ctx()


def evidence_digest_mismatch(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return _edit(w, lambda c: c["evidence"][1].__setitem__("acx:digestMultibase", "sha256:" + "7" * 64)), w.ctx()


def inline_evidence_altered(w: World) -> tuple[dict[str, Any], VerifyContext]:
    def edit(c: dict[str, Any]) -> None:
        c["evidence"][0]["acx:dsseEnvelope"]["payload"] = base64.b64encode(b'{"forged": true}').decode()
    return _edit(w, edit), w.ctx()


def evidence_signed_by_stranger(w: World) -> tuple[dict[str, Any], VerifyContext]:
    forged = game_envelope(w.stranger, 2)
    def edit(c: dict[str, Any]) -> None:
        c["evidence"][1] = credential.evidence_item(canonical(forged), game=2)
    ev = {**w.ctx().evidence, "x": canonical(forged)}  # type: ignore[dict-item]
    return _edit(w, edit), w.ctx(evidence=ev)


def evidence_for_other_rom(w: World) -> tuple[dict[str, Any], VerifyContext]:
    other = game_envelope(w.verifier, 1, rom="sha256:" + "e" * 64)
    def edit(c: dict[str, Any]) -> None:
        c["evidence"][0] = credential.evidence_item(canonical(other), game=1, inline=other)
    return _edit(w, edit), w.ctx()


def proof_context_removed(w: World) -> tuple[dict[str, Any], VerifyContext]:
    cred = copy.deepcopy(w.signed)
    del cred["proof"][0]["@context"]
    return cred, w.ctx()


def level_edited_unsigned(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return _edit(w, lambda c: _result(c).__setitem__("acx:acxLevel", 35), resign=False), w.ctx()


def level_inflated_resigned(w: World) -> tuple[dict[str, Any], VerifyContext]:
    def edit(c: dict[str, Any]) -> None:
        _result(c)["acx:acxLevel"] = 35
        _result(c)["acx:careerTier"] = "legend"
    return _edit(w, edit), w.ctx()


def status_unknown(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return w.signed, w.ctx(status_list=None)


def status_list_by_stranger(w: World) -> tuple[dict[str, Any], VerifyContext]:
    lst = statuslist.new_status_list(list_url=LIST_URL, issuer=w.stranger.did, valid_from=ISSUED)
    return w.signed, w.ctx(status_list=statuslist.sign_status_list(lst, w.stranger, w.stranger.verification_method,
                                                                   ISSUED))


def status_list_tampered(w: World) -> tuple[dict[str, Any], VerifyContext]:
    lst = copy.deepcopy(w.status_list)
    lst["credentialSubject"]["encodedList"] = statuslist.encode_bits(bytearray(statuslist.MIN_ENTRIES // 8))[:-1] + "B"
    return w.signed, w.ctx(status_list=lst)


def status_list_stale(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return w.signed, w.ctx(now=ISSUED + timedelta(days=30))


def status_list_wrong_id(w: World) -> tuple[dict[str, Any], VerifyContext]:
    lst = statuslist.sign_status_list(
        statuslist.new_status_list(list_url=LIST_URL + "x", issuer=VERIFIER_DID, valid_from=ISSUED),
        w.verifier, w.verifier.verification_method, ISSUED)
    return w.signed, w.ctx(status_list=lst)


def result_removed(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return _edit(w, lambda c: c["credentialSubject"].__setitem__("result", [{"type": ["Result"]}])), w.ctx()


def subject_edited(w: World) -> tuple[dict[str, Any], VerifyContext]:
    return _edit(w, lambda c: c["credentialSubject"].__setitem__("id", SUBJECT + "x"), resign=False), w.ctx()


def proof_removed(w: World) -> tuple[dict[str, Any], VerifyContext]:
    cred = dataintegrity.without_proof(w.signed)
    return cred, w.ctx()


FORGERIES: list[tuple[str, Forgery, str]] = [
    ("self-issued (issuer = subject)", self_issued_subject, "self_issued"),
    ("self-issued (issuer = cartridge controller)", self_issued_by_controller, "self_issued"),
    ("self-issued (issuer = ROM signer)", self_issued_by_rom_signer, "self_issued"),
    ("wrong ROM digest (transplant)", wrong_rom, "rom_mismatch"),
    ("wrong manifest digest (SAVE edited)", wrong_manifest, "manifest_mismatch"),
    ("sigma >= 1.5", sigma_too_high, "sigma_gate"),
    ("games < 30", too_few_games, "games_gate"),
    ("revoked", revoked, "revoked"),
    ("expired", expired, "expired"),
    ("not yet valid", not_yet_valid, "not_yet_valid"),
    ("untrusted issuer", untrusted_issuer, "issuer_untrusted"),
    ("method not in assertionMethod", method_not_in_assertion, "method_not_authorized"),
    ("proofValue altered", proof_value_altered, "proof_invalid"),
    ("cryptosuite swapped", cryptosuite_swapped, "proof_invalid"),
    ("benchmark digest not accepted", benchmark_not_accepted, "benchmark_not_accepted"),
    ("benchmark version not accepted", benchmark_version_unknown, "benchmark_not_accepted"),
    ("heldOutSliceDigest mismatch", held_out_mismatch, "held_out_mismatch"),
    ("evidence digest mismatch", evidence_digest_mismatch, "evidence_mismatch"),
    ("inline evidence altered", inline_evidence_altered, "evidence_mismatch"),
    ("evidence signed by another key", evidence_signed_by_stranger, "evidence_signature"),
    ("evidence from another ROM", evidence_for_other_rom, "evidence_mismatch"),
    ("proof @context removed", proof_context_removed, "proof_invalid"),
    ("level edited after signing", level_edited_unsigned, "proof_invalid"),
    ("level inflated and re-signed", level_inflated_resigned, "level_inconsistent"),
    ("status unknown, fail closed", status_unknown, "status_unknown"),
    ("status list by a stranger", status_list_by_stranger, "status_invalid"),
    ("status list tampered", status_list_tampered, "status_invalid"),
    ("status list too old", status_list_stale, "status_stale"),
    ("status list for another URL", status_list_wrong_id, "status_invalid"),
    ("level result removed", result_removed, "schema_invalid"),
    ("subject edited after signing", subject_edited, "proof_invalid"),
    ("proof removed", proof_removed, "proof_missing"),
]


def test_valid_credential_is_accepted(world: World) -> None:
    result = verify_level_credential(world.signed, world.ctx())
    assert result.verified, result.to_json()
    assert result.codes == []
    names = {c.name for c in result.checks}
    assert {"proof", "issuer_trusted", "self_issuance", "sigma_gate", "games_gate", "rom_binding",
            "manifest_binding", "benchmark_accepted", "held_out_slice", "status_list", "revocation",
            "valid_from", "valid_until", "evidence_digest", "evidence_signature"} <= names
    assert not [c for c in result.checks if c.skipped], "a fully supplied context skips nothing"


@pytest.mark.parametrize(("label", "forge", "code"), FORGERIES, ids=[f[0] for f in FORGERIES])
def test_forgery_is_rejected(world: World, label: str, forge: Forgery, code: str) -> None:
    cred, ctx = forge(world)
    result: VerifyResult = verify_level_credential(cred, ctx)
    assert not result.verified, label
    assert code in result.codes, f"{label}: expected {code}, got {result.codes}"
    failed = [c for c in result.checks if not c.ok]
    assert all(c.message and "\n" not in c.message for c in failed)


def test_at_least_fifteen_forgeries() -> None:
    assert len(FORGERIES) >= 15
    assert len({code for _, _, code in FORGERIES}) >= 15


def test_all_failures_are_reported_not_just_the_first(world: World) -> None:
    def edit(c: dict[str, Any]) -> None:
        _result(c)["acx:ratingSigma"] = 2.2
        _result(c)["acx:gamesPlayed"] = 12
        _result(c)["acx:heldOutSliceDigest"] = "sha256:" + "6" * 64
    cred = _edit(world, edit)
    result = verify_level_credential(cred, world.ctx(expected_rom_digest="sha256:" + "0" * 64,
                                                     now=ISSUED - timedelta(days=1)))
    assert {"sigma_gate", "games_gate", "held_out_mismatch", "rom_mismatch", "not_yet_valid"} <= set(result.codes)


def test_unknown_status_allowed_when_asked(world: World) -> None:
    result = verify_level_credential(world.signed, world.ctx(status_list=None, allow_unknown_status=True))
    assert result.verified, result.codes
    assert "revocation" in result.skipped


def test_unknown_status_allowed_by_trust_policy(world: World) -> None:
    result = verify_level_credential(world.signed, world.ctx(status_list=None,
                                                             trust=replace(world.trust, fail_closed=False)))
    assert result.verified


def test_missing_bindings_are_reported_as_skipped(world: World) -> None:
    result = verify_level_credential(world.signed, world.ctx(expected_rom_digest=None, expected_manifest_digest=None,
                                                             evidence=None))
    assert result.verified
    assert {"rom_binding", "manifest_binding"} <= set(result.skipped)


def test_garbage_inputs_do_not_crash(world: World) -> None:
    for junk in ([], "x", {}, {"proof": 3}, {"credentialSubject": []}, {"evidence": [1, None]}):
        result = verify_level_credential(junk, world.ctx())
        assert not result.verified


def test_credential_round_trips_json(world: World) -> None:
    again = json.loads(json.dumps(world.signed))
    assert verify_level_credential(again, world.ctx()).verified
