"""The attempt history resolve verifies (issue 23 item 4), on in-memory bytes: signed attempt records and the
credentials' ``acx:attempt`` make ``attempts: {total, issued, notIssued, entries}``; forged or foreign records do
not count; ``maxAttempts`` refuses a cartridge attempted too often in the window (``too_many_attempts``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from acx_oci.crypto import Identity, generate_identity, sha256_digest
from acx_oci.errors import UsageError
from acx_oci.evaluation import FetchedRecord, evaluate, parse_require, with_attempts
from acx_oci.evaluation.attempts import MaxAttempts
from acx_oci.evaluation.policy import policy_from_dict
from acx_oci.evaluation.requirements import CapabilityRequirement
from acx_oci.model import (
    AttemptCount,
    AttemptRecord,
    CapabilityResolution,
    Resolution,
    record_bytes,
    sign_attempt_record,
)

from ..consumer.test_judge_supersede import BENCH, CAP, MANIFEST, NOW, ROM, Issuers, attestation
from ..consumer.test_quorum import resolution

FIRST = NOW - timedelta(days=3)


def record(signer: Identity, sequence: int, when: datetime, *, manifest: str = MANIFEST,
           issuer: str | None = None) -> FetchedRecord:
    """A NOT ISSUED attempt, signed as the verifier signs it, as the fetcher hands it over."""
    rec = AttemptRecord(issuer=issuer or signer.did, valid_from=when, cartridge_id="io.example/agent", rom_digest=ROM,
                        cartridge_manifest_digest=manifest, benchmark="bench@1", benchmark_digest=BENCH,
                        capability=CAP.id, attempt=AttemptCount(sequence, sequence - 1, FIRST),
                        verdict="not-issued", reasons=(("sigma_gate", "gate: sigma 1.6 is not below 1.5"),),
                        mu=20.0, sigma=1.6, acx_level=15, games_played=90)
    raw = record_bytes(sign_attempt_record(rec, signer))
    from acx_oci.jsonio import parse_json

    return FetchedRecord(sha256_digest(b"manifest" + raw), parse_json(raw, "record"))


def history(w: Issuers, creds: tuple[bytes, ...], records: tuple[FetchedRecord, ...]) -> CapabilityResolution:
    from acx_oci.evaluation import Material, capability_verdicts
    from acx_oci.evaluation.judge import judge_credentials

    m = Material(tuple(attestation(r) for r in creds), w.lists())
    judgement = judge_credentials(m, w.facts, w.trust, NOW)
    caps = capability_verdicts(w.facts, judgement.accepted, judgement.rejected)
    (cap,) = with_attempts(caps, m, records, w.facts, w.trust, NOW)
    return cap


def three_attempts() -> tuple[Issuers, Identity, CapabilityResolution]:
    v = generate_identity()
    w = Issuers(v)
    issued = w.credential(v, 30, age_hours=1, attempt=AttemptCount(3, 2, FIRST))
    cap = history(w, (issued,), (record(v, 1, FIRST), record(v, 2, NOW - timedelta(days=1))))
    return w, v, cap


def test_the_history_counts_records_and_the_issued_credential() -> None:
    _, v, cap = three_attempts()
    doc = cap.to_json()["attempts"]
    assert (doc["total"], doc["issued"], doc["notIssued"]) == (3, 1, 2)
    assert [e["verdict"] for e in doc["entries"]] == ["not-issued", "not-issued", "issued"]  # oldest first
    assert doc["entries"][0]["reasons"] == ["sigma_gate"] and doc["entries"][2]["sequence"] == 3
    assert cap.attempts.lines() == [f"3 attempts by {v.did}: 1 issued, 2 not issued"]


def test_the_verifiers_counter_counts_deleted_records() -> None:
    v = generate_identity()
    w = Issuers(v)
    issued = w.credential(v, 30, age_hours=1, attempt=AttemptCount(3, 2, FIRST))
    cap = history(w, (issued,), ())  # the publisher deleted both NOT ISSUED records
    assert (cap.attempts.total, cap.attempts.issued, cap.attempts.not_issued) == (3, 1, 2)


def test_forged_and_foreign_records_do_not_count() -> None:
    v, mallory = generate_identity(), generate_identity()
    w = Issuers(v)
    forged = (record(mallory, 1, FIRST),  # an untrusted signer
              record(mallory, 2, FIRST, issuer=v.did),  # names the trusted verifier, signed by another key
              record(v, 3, FIRST, manifest="sha256:" + "9" * 64))  # about another cartridge
    tampered = record(v, 4, FIRST)
    assert isinstance(tampered.document, dict)
    tampered = replace(tampered, document={**tampered.document, "verdict": "issued", "credentialDigest": BENCH})
    cap = history(w, (), (*forged, tampered, record(v, 1, FIRST), record(v, 1, FIRST)))
    assert cap.attempts.total == 1 and len(cap.attempts.entries) == 1


def test_max_attempts_refuses_a_fourth_attempt_in_the_window() -> None:
    v = generate_identity()
    w = Issuers(v)
    records = tuple(record(v, n, FIRST + timedelta(hours=n)) for n in (1, 2, 3))
    issued = w.credential(v, 30, age_hours=1, attempt=AttemptCount(4, 3, FIRST))
    four = resolution(history(w, (issued,), records))
    bound = CapabilityRequirement("build-dag", min_level=10, max_attempts=MaxAttempts(3, 30 * 86400.0, "30d"))
    result = bound.evaluate(four, NOW)
    assert not result.met and result.codes == ("too_many_attempts",)
    assert "4 attempts in the last 30d" in result.reasons[0]
    assert CapabilityRequirement("build-dag", min_level=10).evaluate(four, NOW).met
    # outside a 1-day window only the latest attempt counts; three in the window are allowed
    assert CapabilityRequirement("build-dag", min_level=10,
                                 max_attempts=MaxAttempts(3, 86400.0, "1d")).evaluate(four, NOW).met
    three: Resolution = resolution(three_attempts()[2])
    policy = policy_from_dict({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["acx/*"], "require": {
        "capabilities": [{"taskType": "build-dag", "minLevel": 10, "maxAttempts": {"count": 3, "window": "30d"}}]}}]})
    assert evaluate(policy, "acx/agent", three, NOW).allowed
    verdict = evaluate(policy, "acx/agent", four, NOW)
    assert not verdict.allowed and "too_many_attempts" in verdict.summary()


def test_the_publisher_scope_counts_the_verifiers_publisher_counter() -> None:
    """Issue 33 item 4: a renamed cartridge's first attempt is the publisher's fourth; only scope publisher sees it."""
    v = generate_identity()
    w = Issuers(v)
    count = AttemptCount(1, 0, FIRST, "a" * 32, "did:key:z6Mkpublisher", 4, FIRST)
    one = resolution(history(w, (w.credential(v, 30, age_hours=1, attempt=count),), ()))
    bound = parse_require("build-dag>=10@maxAttempts=3/30d/publisher").as_requirement()
    result = bound.evaluate(one, NOW)
    assert not result.met and "4 attempts by this publisher in the last 30d" in result.reasons[0]
    assert parse_require("build-dag>=10@maxAttempts=3/30d").as_requirement().evaluate(one, NOW).met
    assert "best of 4 attempts by this publisher in 3 d" in one.capabilities[0].attempts.lines()[0]
    policy = policy_from_dict({"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["acx/*"], "require": {
        "capabilities": [{"taskType": "build-dag", "minLevel": 10,
                          "maxAttempts": {"count": 3, "window": "30d", "scope": "publisher"}}]}}]})
    assert not evaluate(policy, "acx/agent", one, NOW).allowed
    with pytest.raises(UsageError) as exc:
        parse_require("build-dag>=10@maxAttempts=3/30d/everyone")
    assert "cartridge or publisher" in str(exc.value) and exc.value.exit_code == 2


def test_the_count_does_not_change_with_the_trust_files_other_rules() -> None:
    """Issue 34 item 2: a verified credential this consumer refuses (here: its solver, and a stricter gate) was
    still an attempt; a forged one (another key) is not."""
    v, mallory = generate_identity(), generate_identity()
    w = Issuers(v, mallory)
    trusted = replace(w.trust, verifiers=[p for p in w.trust.verifiers if p.id == v.did])
    forged = w.credential(mallory, 30, age_hours=1, attempt=AttemptCount(1, 0, FIRST, "c" * 32))
    issued = w.credential(v, 30, age_hours=1, attempt=AttemptCount(1, 0, FIRST, "b" * 32))
    w.trust = trusted
    assert history(w, (issued,), ()).attempts.total == 1
    w.trust = replace(w.trust, solvers=("nobody",), sigma_max=0.01)
    cap = history(w, (issued,), (record(v, 1, FIRST),))
    assert not cap.accepted and {"solver_not_accepted", "sigma_gate"} <= set(cap.rejected[0].codes)
    assert cap.attempts.total == 2 and cap.attempts.issued == 1  # the refused credential and the record
    w.trust = trusted  # an untrusted issuer's credential is no attempt, whatever else it says
    assert history(w, (forged,), ()).attempts.total == 0
