"""The pure judge: bytes in, verdicts out. No store, no server, no file: credentials and status lists are
signed in memory with the project's own code, serialised, parsed back as the fetcher would, and judged."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from acx_oci.crypto import Identity, canonical, generate_identity, sha256_digest
from acx_oci.evaluation import CartridgeFacts, FetchedAttestation, Material, capability_verdicts
from acx_oci.evaluation.judge import judge_credentials
from acx_oci.evaluation.status_choice import choose_status_list
from acx_oci.jsonio import parse_json
from acx_oci.model import (
    STATUS_TAMPERED,
    STATUS_VALID,
    UNPROVEN,
    VERIFIED,
    LevelCredential,
    evidence_digest,
    parse_capability,
    statuslist,
)
from acx_oci.model.credential import LevelClaim, issue
from acx_oci.trust import AcceptedBenchmark, Party, Trust

from ..support.games import Played, play_level

NOW = datetime.now(UTC).replace(microsecond=0)
BENCH = "sha256:" + "b" * 64
HELD = "sha256:" + "c" * 64
ROM = "sha256:" + "1" * 64
MANIFEST = "sha256:" + "2" * 64
CAP = parse_capability("build-dag[snowflake+airflow+dbt]@data-engineering")
URL = f"https://status.example/lists/{uuid.uuid4()}"
INDEX = 7


class Bytes:
    """One verifier, one publisher, one level credential and its status lists, all as bytes."""

    def __init__(self) -> None:
        self.verifier, self.publisher = generate_identity(), generate_identity()
        self.played: Played = play_level(self.verifier, ROM, BENCH, 20)
        self.trust = Trust(verifiers=[Party(self.verifier.did)],
                           benchmarks=[AcceptedBenchmark("bench", "1", BENCH, HELD)], solvers=("rom", "reference"))
        self.facts = CartridgeFacts(MANIFEST, ROM, self.publisher.did, self.publisher.did, None, STATUS_VALID, (CAP,))
        self.credential = canonical(self.issue(self.verifier))

    def issue(self, signer: Identity) -> dict[str, Any]:
        return issue(LevelClaim(previous_version="none",
                                issuer_did=signer.did, subject_id="urn:acx:cartridge:x", capability_id=CAP.id,
                                **self.played.claims(), rom_digest=ROM, manifest_digest=MANIFEST, benchmark_id="bench",
                                benchmark_version="1", benchmark_digest=BENCH, held_out_slice_digest=HELD,
                                evidence=self.played.evidence(), status_entry=statuslist.status_entry(URL, INDEX),
                                valid_from=NOW - timedelta(hours=1), valid_until=NOW + timedelta(days=30),
                                achievement_name="level"), signer)

    def status_list(self, *, revoked: bool = False, sequence: int = 1) -> bytes:
        bits = bytearray(statuslist.MIN_ENTRIES // 8)
        if revoked:
            statuslist.set_bit(bits, INDEX)
        doc = statuslist.new_status_list(list_url=URL, issuer=self.verifier.did, valid_from=NOW - timedelta(hours=2),
                                         bits=bytes(bits), sequence=sequence)
        return canonical(statuslist.sign_status_list(doc, self.verifier, self.verifier.verification_method,
                                                     NOW - timedelta(hours=2)))


@pytest.fixture(scope="module")
def world() -> Bytes:
    return Bytes()


def attestation(raw: bytes) -> FetchedAttestation:
    """What the fetcher hands the judge for one attestation whose layers are the credential and its records."""
    cred = LevelCredential.read(raw)  # the door
    layers = frozenset(d for d in (evidence_digest(e) for e in cred.evidence) if d)
    return FetchedAttestation(digest=sha256_digest(b"attestation" + raw), offered=CAP.id, credential=cred,
                              credential_digest=sha256_digest(raw), evidence_present=layers)


def material(raw: bytes, *lists: bytes, remembered: int = 0, issuer: str = "") -> Material:
    docs = tuple(parse_json(b, "status list") for b in lists)
    return Material((attestation(raw),), {URL: docs} if docs else {},
                    {(URL, issuer): remembered} if remembered else {})


def rejection_codes(world: Bytes, m: Material, trust: Trust | None = None) -> tuple[str, ...]:
    judgement = judge_credentials(m, world.facts, trust or world.trust, NOW)
    rejected = judgement.rejected[CAP.id]
    assert not judgement.accepted[CAP.id] and len(rejected) == 1
    return rejected[0].codes


def test_a_valid_credential_is_verified(world: Bytes) -> None:
    m = material(world.credential, world.status_list(sequence=3))
    judgement = judge_credentials(m, world.facts, world.trust, NOW)
    assert not judgement.rejected[CAP.id] and not judgement.unmatched
    (acc,) = judgement.accepted[CAP.id]
    assert acc.acx_level == 20 and acc.issuer == world.verifier.did
    assert judgement.status_seen == {(URL, world.verifier.did): 3}  # the list verified: the caller remembers it
    (cap,) = capability_verdicts(world.facts, judgement.accepted, judgement.rejected)
    assert cap.effective == VERIFIED and cap.best == acc


def test_a_tampered_credential_is_rejected_for_its_proof(world: Bytes) -> None:
    doc = parse_json(world.credential, "credential")
    assert isinstance(doc, dict)
    doc["credentialSubject"]["acx:achievement"] = "tampered"  # any signed member changed after signing
    raw = canonical(doc)
    assert "proof_invalid" in rejection_codes(world, material(raw, world.status_list()))


def test_a_revoked_credential_is_revoked(world: Bytes) -> None:
    codes = rejection_codes(world, material(world.credential, world.status_list(revoked=True)))
    assert codes == ("revoked",)


def test_a_revoking_copy_wins_over_a_fresher_clear_one(world: Bytes) -> None:
    clear, revoking = (parse_json(b, "list") for b in (world.status_list(sequence=9),
                                                       world.status_list(revoked=True, sequence=2)))
    cred = LevelCredential.read(world.credential)
    assert isinstance(clear, dict) and isinstance(revoking, dict)
    assert choose_status_list(cred, (clear, revoking)) is revoking


def test_unknown_status_fails_closed(world: Bytes) -> None:
    codes = rejection_codes(world, material(world.credential))  # no copy of the list fetched anywhere
    assert codes == ("status_unknown",)
    allowed = judge_credentials(material(world.credential), world.facts, world.trust, NOW, allow_unknown_status=True)
    assert len(allowed.accepted[CAP.id]) == 1  # only an explicit allowance lets it through


def test_a_list_older_than_the_remembered_sequence_is_a_rollback(world: Bytes) -> None:
    m = material(world.credential, world.status_list(sequence=4), remembered=5, issuer=world.verifier.did)
    codes = rejection_codes(world, m)
    assert "status_rollback" in codes and "revoked" not in codes
    judgement = judge_credentials(m, world.facts, world.trust, NOW)
    assert judgement.status_seen == {}  # a rolled-back list raises no mark


def test_an_untrusted_issuer_and_an_unclaimed_capability(world: Bytes) -> None:
    stranger = Trust(verifiers=[Party(generate_identity().did)], benchmarks=world.trust.benchmarks,
                     solvers=world.trust.solvers)
    assert "issuer_untrusted" in rejection_codes(world, material(world.credential, world.status_list()), stranger)
    other = replace(world.facts, capabilities=(parse_capability("build-dag[snowflake+airflow]@data-engineering"),))
    judgement = judge_credentials(material(world.credential, world.status_list()), other, world.trust, NOW)
    assert [r.codes for r in judgement.unmatched] == [("capability_not_claimed",)]


def test_fetch_time_reasons_are_kept_and_a_tampered_cartridge_verifies_nothing(world: Bytes) -> None:
    item = replace(attestation(world.credential), codes=("subject_mismatch",), messages=("another subject",))
    m = Material((item,), {URL: (parse_json(world.status_list(), "list"),)})
    judgement = judge_credentials(m, world.facts, world.trust, NOW)
    assert judgement.rejected[CAP.id][0].codes == ("subject_mismatch",)
    good = judge_credentials(material(world.credential, world.status_list()), world.facts, world.trust, NOW)
    tampered = replace(world.facts, signature_status=STATUS_TAMPERED)
    (cap,) = capability_verdicts(tampered, good.accepted, good.rejected)
    assert cap.effective == UNPROVEN and cap.best is None
