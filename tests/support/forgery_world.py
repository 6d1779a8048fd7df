"""The in-memory world of a signed level credential: verifier/publisher/stranger keys, trust,
three signed game envelopes, a status list, and the credential unsigned and signed.

Shared by the forgery, credential-schema and ``vc`` CLI tests.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from acx_oci.crypto import Identity, canonical, dataintegrity, identity_from_seed, sign_envelope
from acx_oci.evaluation.checks import VerifyContext
from acx_oci.model import credential, statuslist
from acx_oci.trust import AcceptedBenchmark, Party, Trust

ISSUED = datetime(2026, 7, 1, 12, 0, 0, tzinfo=UTC)
NOW = ISSUED + timedelta(days=1)
ROM = "sha256:" + "1" * 64
MANIFEST = "sha256:" + "2" * 64
BENCH_DIGEST = "sha256:" + "3" * 64
HELD_OUT = "sha256:" + "4" * 64
LIST_URL = "https://verifier.example/status/5f2b7c3e-0000-4000-8000-000000000001"
VERIFIER_DID = "did:web:verifier.example"
SUBJECT = "urn:acx:cartridge:io.example/dag-agent@1.0.0"


def _doc_with_unauthorized_key(main: Identity, other: Identity) -> dict[str, Any]:
    """key-1 is the assertion key; key-3 is present but only for authentication."""
    doc = main.did_document()
    doc["verificationMethod"].append({"id": f"{VERIFIER_DID}#key-3", "type": "Multikey", "controller": VERIFIER_DID,
                                      "publicKeyMultibase": other.multikey})
    doc["authentication"].append(f"{VERIFIER_DID}#key-3")
    return doc


@dataclass
class World:
    verifier: Identity
    stray: Identity  # holds key-3 of the verifier's document (not an assertion key)
    publisher: Identity
    stranger: Identity
    trust: Trust
    envelopes: list[dict[str, Any]]
    status_list: dict[str, Any]
    index: int
    unsigned: dict[str, Any]
    signed: dict[str, Any]

    def ctx(self, **over: Any) -> VerifyContext:
        base = VerifyContext(trust=self.trust, now=NOW, expected_rom_digest=ROM, expected_manifest_digest=MANIFEST,
                             cartridge_controller=self.publisher.did, rom_signer=self.publisher.did,
                             status_list=self.status_list, allow_unknown_status=False,
                             evidence={credential.evidence_digest(credential.evidence_item(canonical(e))) or "":
                                       canonical(e) for e in self.envelopes})
        return replace(base, **over)

    def resign(self, cred: dict[str, Any], signer: Identity | None = None, method: str | None = None) -> dict[str, Any]:
        signer = signer or self.verifier
        return credential.sign_credential(dataintegrity.without_proof(cred), signer,
                                          method or signer.verification_method, ISSUED)


def game_envelope(signer: Identity, game: int, rom: str = ROM) -> dict[str, Any]:
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "cartridge-rom", "digest": {"sha256": rom.split(":", 1)[1]}}],
        "predicateType": "https://acx.dev/attestation/game-record/v1",
        "predicate": {"game": game, "taskCommitment": "hmac-sha256:" + "ab" * 32, "difficulty": 30.0 + game,
                      "outcome": "certified-pass" if game % 2 else "model-fail",
                      "ratingBefore": {"mu": 25.0, "sigma": 8.3}, "ratingAfter": {"mu": 26.0, "sigma": 8.0},
                      "romDigest": rom, "benchmarkDigest": BENCH_DIGEST, "solver": "reference"},
    }
    return sign_envelope(canonical(statement), "application/vnd.in-toto+json", signer)


def make_world() -> World:
    verifier = identity_from_seed(bytes(range(32)), VERIFIER_DID)
    stray = identity_from_seed(bytes([7]) * 32, VERIFIER_DID)
    publisher = identity_from_seed(bytes([1]) * 32)
    stranger = identity_from_seed(bytes([2]) * 32)
    trust = Trust(publishers=[Party(publisher.did)],
                  verifiers=[Party(VERIFIER_DID, _doc_with_unauthorized_key(verifier, stray))],
                  benchmarks=[AcceptedBenchmark("acx-bench-dag-de", "2026.07.1", BENCH_DIGEST, HELD_OUT)],
                  status_max_age=7 * 86400, solvers=("rom", "reference"))
    index = statuslist.allocate_index(statuslist.MIN_ENTRIES, set())
    status_list = statuslist.sign_status_list(
        statuslist.new_status_list(list_url=LIST_URL, issuer=VERIFIER_DID, valid_from=ISSUED),
        verifier, verifier.verification_method, ISSUED)
    envelopes = [game_envelope(verifier, g) for g in (1, 2, 3)]
    evidence = [credential.evidence_item(canonical(envelopes[0]), game=1, inline=envelopes[0])]
    evidence += [credential.evidence_item(canonical(e), game=i + 2) for i, e in enumerate(envelopes[1:])]
    mu, sigma = 33.0312, 1.2321
    level, tier = credential.level_for(mu, sigma)
    unsigned = credential.build_level_credential(credential.LevelClaim(previous_version="none",
        issuer_did=VERIFIER_DID, subject_id=SUBJECT, capability_id="build-dag-0123abcd", rating_mu=mu,
        rating_sigma=sigma, games_played=90, acx_level=level, career_tier=tier, pass_rate=0.6, rom_digest=ROM,
        manifest_digest=MANIFEST, benchmark_id="acx-bench-dag-de", benchmark_version="2026.07.1",
        benchmark_digest=BENCH_DIGEST, held_out_slice_digest=HELD_OUT, evidence=evidence,
        status_entry=statuslist.status_entry(LIST_URL, index), valid_from=ISSUED,
        valid_until=ISSUED + timedelta(days=365), achievement_name="ACX Level — DAG construction"))
    signed = credential.sign_credential(unsigned, verifier, verifier.verification_method, ISSUED)
    return World(verifier, stray, publisher, stranger, trust, envelopes, status_list, index, unsigned, signed)
