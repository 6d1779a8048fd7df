"""Superseding in the pure judge (issue 23 item 2): per (issuer, ROM, benchmark digest, capability) only the
newest credential that verifies decides; older ones are ``superseded`` even while not revoked; a forged
"newer" one cannot hide a valid older one. In-memory bytes only: no store, no server, no file."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from acx_oci.crypto import Identity, canonical, generate_identity, sha256_digest
from acx_oci.evaluation import CartridgeFacts, FetchedAttestation, Material, capability_verdicts
from acx_oci.evaluation.judge import judge_credentials
from acx_oci.jsonio import parse_json
from acx_oci.model import (
    STATUS_VALID,
    UNPROVEN,
    VERIFIED,
    AttemptCount,
    CapabilityResolution,
    LevelCredential,
    evidence_digest,
    parse_capability,
    statuslist,
)
from acx_oci.model.credential import LevelClaim, issue
from acx_oci.trust import AcceptedBenchmark, Party, Trust

from ..support.games import play_level

NOW = datetime.now(UTC).replace(microsecond=0)
BENCH = "sha256:" + "b" * 64
HELD = "sha256:" + "c" * 64
ROM = "sha256:" + "1" * 64
MANIFEST = "sha256:" + "2" * 64
CAP = parse_capability("build-dag[snowflake+airflow+dbt]@data-engineering")


class Issuers:
    """Verifiers, each with its own status list, issuing level credentials as bytes."""

    def __init__(self, *verifiers: Identity) -> None:
        self.verifiers = verifiers
        self.urls = {v.did: f"https://status.example/lists/{uuid.uuid4()}" for v in verifiers}
        self.trust = Trust(verifiers=[Party(v.did, v.did_document() if v.did.startswith("did:web") else None)
                                      for v in verifiers],
                           benchmarks=[AcceptedBenchmark("bench", "1", BENCH, HELD)], solvers=("rom", "reference"))
        self.publisher = generate_identity()
        self.facts = CartridgeFacts(MANIFEST, ROM, self.publisher.did, self.publisher.did, None, STATUS_VALID, (CAP,))
        self.index = 0
        self.played: dict[tuple[str, int], Any] = {}

    def credential(self, signer: Identity, level: int, age_hours: float, attempt: AttemptCount | None = None) -> bytes:
        key = (signer.did, level)
        if key not in self.played:
            self.played[key] = play_level(signer, ROM, BENCH, level)
        played = self.played[key]
        self.index += 1
        when = NOW - timedelta(hours=age_hours)
        return canonical(issue(LevelClaim(previous_version="none",
            issuer_did=signer.did, subject_id="urn:acx:cartridge:x", capability_id=CAP.id, **played.claims(),
            rom_digest=ROM, manifest_digest=MANIFEST, benchmark_id="bench", benchmark_version="1",
            benchmark_digest=BENCH, held_out_slice_digest=HELD, evidence=played.evidence(),
            status_entry=statuslist.status_entry(self.urls[signer.did], self.index), valid_from=when,
            valid_until=when + timedelta(days=30), achievement_name="level", attempt=attempt), signer))

    def lists(self) -> dict[str, tuple[dict[str, Any], ...]]:
        out = {}
        for v in self.verifiers:
            doc = statuslist.new_status_list(list_url=self.urls[v.did], issuer=v.did,
                                             valid_from=NOW - timedelta(hours=2))
            signed = statuslist.sign_status_list(doc, v, v.verification_method, NOW - timedelta(hours=2))
            out[self.urls[v.did]] = (parse_json(canonical(signed), "list"),)
        return out

    def resolve(self, *raws: bytes) -> CapabilityResolution:
        m = Material(tuple(attestation(r) for r in raws), self.lists())
        judgement = judge_credentials(m, self.facts, self.trust, NOW)
        (cap,) = capability_verdicts(self.facts, judgement.accepted, judgement.rejected)
        return cap


def attestation(raw: bytes) -> FetchedAttestation:
    cred = LevelCredential.read(raw)  # the door
    layers = frozenset(d for d in (evidence_digest(e) for e in cred.evidence) if d)
    return FetchedAttestation(digest=sha256_digest(b"attestation" + raw), offered=CAP.id, credential=cred,
                              credential_digest=sha256_digest(raw), evidence_present=layers)


def codes_of(cap: CapabilityResolution, raw: bytes) -> tuple[str, ...]:
    (rej,) = [r for r in cap.rejected if r.credential_digest == sha256_digest(raw)]
    return rej.codes


def test_the_newer_credential_of_an_issuer_decides_even_when_lower() -> None:
    v = generate_identity()
    w = Issuers(v)
    older, newer = w.credential(v, 32, age_hours=48), w.credential(v, 16, age_hours=1)
    cap = w.resolve(older, newer)
    assert cap.effective == VERIFIED and cap.best is not None and cap.best.acx_level == 16
    assert [a.credential_digest for a in cap.accepted] == [sha256_digest(newer)]
    assert codes_of(cap, older) == ("superseded",)  # not revoked yet, and still not counted
    assert "superseded by credential " + sha256_digest(newer) in cap.rejected[0].messages[0]


def test_the_order_is_by_instant_not_by_listing_order() -> None:
    v = generate_identity()
    w = Issuers(v)
    older, newer = w.credential(v, 32, age_hours=48), w.credential(v, 16, age_hours=1)
    cap = w.resolve(newer, older)
    assert cap.best is not None and cap.best.credential_digest == sha256_digest(newer)


def test_a_forged_newer_credential_cannot_hide_a_valid_older_one() -> None:
    v = generate_identity()
    w = Issuers(v)
    older = w.credential(v, 32, age_hours=48)
    forged_doc = parse_json(w.credential(v, 16, age_hours=1), "credential")
    assert isinstance(forged_doc, dict)
    forged_doc["validFrom"] = (NOW - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")  # after signing
    forged = canonical(forged_doc)
    cap = w.resolve(older, forged)
    assert cap.effective == VERIFIED and cap.best is not None and cap.best.credential_digest == sha256_digest(older)
    assert "proof_invalid" in codes_of(cap, forged) and "superseded" not in codes_of(cap, forged)


def test_a_credential_by_another_key_under_the_issuers_name_cannot_supersede() -> None:
    v, mallory = generate_identity(), generate_identity()
    w = Issuers(v)
    older = w.credential(v, 32, age_hours=48)
    w.urls[mallory.did] = w.urls[v.did]
    doc = parse_json(w.credential(mallory, 16, age_hours=1), "credential")
    assert isinstance(doc, dict)
    doc["issuer"] = v.did  # names the trusted issuer, signed by another key
    fake = canonical(doc)
    cap = w.resolve(older, fake)
    assert cap.best is not None and cap.best.acx_level == 32
    assert "superseded" not in codes_of(cap, fake)


def test_issuers_do_not_supersede_each_other() -> None:
    a, b = generate_identity(), generate_identity()
    w = Issuers(a, b)
    by_a, by_b = w.credential(a, 32, age_hours=48), w.credential(b, 16, age_hours=1)
    cap = w.resolve(by_a, by_b)
    assert not cap.rejected and len(cap.accepted) == 2
    assert cap.best is not None and cap.best.acx_level == 32


def test_a_tie_at_the_same_instant_goes_to_the_higher_credential_digest() -> None:
    v = generate_identity()
    w = Issuers(v)
    one, two = w.credential(v, 32, age_hours=3), w.credential(v, 16, age_hours=3)
    winner = max((one, two), key=sha256_digest)
    for order in ((one, two), (two, one)):
        cap = w.resolve(*order)
        assert cap.best is not None and cap.best.credential_digest == sha256_digest(winner)
        assert codes_of(cap, min((one, two), key=sha256_digest)) == ("superseded",)


def test_with_only_the_older_one_left_it_decides_unless_revoked() -> None:
    """Deleting the newer credential: the older one counts again only while its issuer has not revoked it."""
    v = generate_identity()
    w = Issuers(v)
    older = w.credential(v, 32, age_hours=48)
    assert w.resolve(older).effective == VERIFIED
    bits = bytearray(statuslist.MIN_ENTRIES // 8)
    statuslist.set_bit(bits, 1)
    doc = statuslist.new_status_list(list_url=w.urls[v.did], issuer=v.did, valid_from=NOW - timedelta(hours=1),
                                     bits=bytes(bits), sequence=2)
    revoking = parse_json(canonical(statuslist.sign_status_list(doc, v, v.verification_method,
                                                                NOW - timedelta(hours=1))), "list")
    m = Material((attestation(older),), {w.urls[v.did]: (revoking,)})
    judgement = judge_credentials(m, w.facts, w.trust, NOW)
    (cap,) = capability_verdicts(w.facts, judgement.accepted, judgement.rejected)
    assert cap.effective == UNPROVEN and codes_of(cap, older) == ("revoked",)


def lax_attestation(raw: bytes) -> FetchedAttestation:
    """As the fetcher hands it over: only a lax parse of the claims, with the bytes for the strict one."""
    cred = LevelCredential.claims(raw)
    assert cred is not None and not cred.strict
    return replace(attestation(canonical(cred.to_json())), digest=sha256_digest(b"attestation" + raw),
                   credential=cred, credential_digest=sha256_digest(raw))


def test_claims_read_laxly_are_parsed_strictly_before_they_decide() -> None:
    """A newer copy whose bytes say ``acx:acxLevel`` twice (16, then 40): the lax read that orders the walk sees
    40, the strict parse refuses it (two readers could see two levels), and the older credential decides."""
    v = generate_identity()
    w = Issuers(v)
    older, newer = w.credential(v, 32, age_hours=48), w.credential(v, 16, age_hours=1)
    assert newer.count(b'"acx:acxLevel":16') == 1
    doubled = newer.replace(b'"acx:acxLevel":16', b'"acx:acxLevel":16,"acx:acxLevel":40')
    m = Material((lax_attestation(older), lax_attestation(doubled)), w.lists())
    judgement = judge_credentials(m, w.facts, w.trust, NOW)
    (cap,) = capability_verdicts(w.facts, judgement.accepted, judgement.rejected)
    assert cap.best is not None and cap.best.credential_digest == sha256_digest(older) and cap.best.acx_level == 32
    assert codes_of(cap, doubled) == ("schema_invalid",)
    assert "acx:acxLevel" in next(r for r in cap.rejected if r.credential_digest == sha256_digest(doubled)).messages[0]
    honest = judge_credentials(Material((lax_attestation(older), lax_attestation(newer)), w.lists()), w.facts,
                               w.trust, NOW)
    (acc,) = honest.accepted[CAP.id]
    assert acc.credential_digest == sha256_digest(newer) and acc.credential == parse_json(newer, "credential")


def _logged_pair(order: tuple[int, int]) -> tuple[Issuers, dict[str, Any], list[bytes], Any]:
    """Two credentials of one key issued in the same second (levels 32 and 16), logged in ``order``."""
    from .test_log_consumer import Log, entry

    v = generate_identity()
    w = Issuers(v)
    creds = [w.credential(v, 32, age_hours=1), w.credential(v, 16, age_hours=1)]
    log = Log()
    index = {}
    for k in order:
        index[k] = log.add(entry(sha256_digest(creds[k]), cap=CAP.id, issuer=v.did, cartridgeId="x", romDigest=ROM,
                                 benchmarkDigest=BENCH))
    proofs = {k: log.proof(index[k]) for k in index}
    return w, {"log": log, "proofs": proofs, "verifier": v}, creds, log


def _judge_logged(w: Issuers, creds: list[bytes], proofs: dict[int, bytes], log: Any, pinned: bool) -> Any:
    from acx_oci.evaluation import LogView, pinned_keys

    trust = Trust(verifiers=[Party(w.verifiers[0].did, log=log.trust() if pinned else None)],
                  benchmarks=w.trust.benchmarks, solvers=w.trust.solvers)
    items = tuple(replace(attestation(raw), log_proof=proofs[k]) for k, raw in enumerate(creds))
    view = LogView(head=log.note(), entries=tuple(enumerate(log.entries)), entries_from=0)
    m = Material(items, w.lists(), logs={log.origin: view} if pinned else None, log_keys=pinned_keys(trust))
    judgement = judge_credentials(m, w.facts, trust, NOW)
    (cap,) = capability_verdicts(w.facts, judgement.accepted, judgement.rejected)
    return cap


def test_the_log_orders_two_credentials_issued_in_one_second() -> None:
    """Whole-second validFrom ties; the pinned log's order decides which is newer, inside the walk (the older
    one is superseded unverified), whichever way the digests sort."""
    for order, newest in (((0, 1), 1), ((1, 0), 0)):
        w, info, creds, log = _logged_pair(order)
        cap = _judge_logged(w, creds, info["proofs"], log, pinned=True)
        assert cap.effective == VERIFIED and cap.best is not None, cap
        assert cap.best.credential_digest == sha256_digest(creds[newest]), (order, cap.best.acx_level)
        assert codes_of(cap, creds[1 - newest]) == ("superseded",)


def test_an_unpinned_issuers_log_proofs_order_nothing() -> None:
    """Without the log in the trust file its proofs are never checked, so a forged one must not order the walk:
    the tie falls to the credential digests, as without any proof."""
    for order in ((0, 1), (1, 0)):
        w, info, creds, log = _logged_pair(order)
        cap = _judge_logged(w, creds, info["proofs"], log, pinned=False)
        assert cap.best is not None and cap.best.credential_digest == max(sha256_digest(c) for c in creds)
