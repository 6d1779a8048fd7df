"""resolve on an OCI image layout: newest valid credential per benchmark wins, bounds give partial,
credentials for unclaimed capabilities don't count, tampered cartridges verify nothing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from acx_oci.crypto import Identity, canonical, generate_identity
from acx_oci.model import CapabilityRecord, parse_capability, statuslist
from acx_oci.model.credential import LevelClaim, issue
from acx_oci.oci import Store, open_store
from acx_oci.services.artifacts import init_directory, publish_status_list, push_attestation, push_directory
from acx_oci.services.consumer import ResolveLimits, resolve_cartridge
from acx_oci.trust import AcceptedBenchmark, Party, Trust

from ..support.games import play_level

NOW = datetime.now(UTC).replace(microsecond=0)
BENCH = "sha256:" + "b" * 64
BENCH2 = "sha256:" + "d" * 64  # another version is another benchmark digest (the superseding key names it)
HELD = "sha256:" + "c" * 64
CAP = parse_capability("build-dag[snowflake+airflow+dbt]@data-engineering")


class World:
    def __init__(self, tmp: Path) -> None:
        self.publisher, self.verifier = generate_identity(), generate_identity()
        init_directory(tmp / "agent", "io.example/agent", "1.0.0", [CAP])
        self.ref = f"oci:{tmp / 'layout'}:1.0.0"
        self.store: Store = open_store(self.ref)
        self.pushed = push_directory(self.store, tmp / "agent", self.publisher, "1.0.0")
        self.url = f"https://status.example/lists/{uuid.uuid4()}"
        signed = statuslist.sign_status_list(
            statuslist.new_status_list(list_url=self.url, issuer=self.verifier.did, valid_from=NOW - timedelta(days=2)),
            self.verifier, self.verifier.verification_method, NOW - timedelta(days=2))
        publish_status_list(self.store, signed)
        self.trust = Trust(verifiers=[Party(self.verifier.did)],
                           benchmarks=[AcceptedBenchmark("bench", "1", BENCH, HELD),
                                       AcceptedBenchmark("bench", "2", BENCH2, HELD)],
                           solvers=("rom", "reference"))
        self.index = 0

    def attest(self, level: int, age_hours: float, *, version: str = "1", cap: CapabilityRecord = CAP,
               signer: Identity | None = None) -> str:
        signer = signer or self.verifier
        bench = BENCH2 if version == "2" else BENCH
        played = play_level(signer, self.pushed.rom_digest, bench, level)
        self.index += 1
        when = NOW - timedelta(hours=age_hours)
        cred = issue(LevelClaim(previous_version="none",
                                 issuer_did=signer.did, subject_id="urn:acx:cartridge:x", capability_id=cap.id,
                     **played.claims(), rom_digest=self.pushed.rom_digest,
                     manifest_digest=self.pushed.manifest_digest, benchmark_id="bench", benchmark_version=version,
                     benchmark_digest=bench, held_out_slice_digest=HELD, evidence=played.evidence(),
                     status_entry=statuslist.status_entry(self.url, self.index), valid_from=when,
                     valid_until=when + timedelta(days=30), achievement_name="level"), signer)
        desc = push_attestation(self.store, self.store.resolve(self.pushed.manifest_digest), canonical(cred),
                                played.raws)
        return desc.digest


def test_newest_valid_per_benchmark_then_highest_level(tmp_path: Path) -> None:
    w = World(tmp_path)
    w.attest(30, age_hours=48)  # older, higher
    newest = w.attest(20, age_hours=1)  # newest on bench@1 wins over the older one
    other = w.attest(25, age_hours=5, version="2")  # bench@2: its own newest
    res = resolve_cartridge(w.store, "1.0.0", w.trust, now=NOW)
    cap = res.capabilities[0]
    assert cap.effective == "VERIFIED" and not res.partial
    assert {a.attestation_digest for a in cap.accepted} == {newest, other}
    assert cap.best is not None and cap.best.attestation_digest == other and cap.best.acx_level == 25


def test_max_referrers_bound_sets_partial(tmp_path: Path) -> None:
    w = World(tmp_path)
    for age in (1, 2, 3):
        w.attest(20, age_hours=age)
    res = resolve_cartridge(w.store, "1.0.0", w.trust, now=NOW, limits=ResolveLimits(max_referrers=2))
    assert res.partial is True and res.referrers_seen == 3
    assert any("max-referrers" in n for n in res.notes)
    assert resolve_cartridge(w.store, "1.0.0", w.trust, now=NOW).partial is False


def test_unclaimed_capability_and_untrusted_issuer(tmp_path: Path) -> None:
    w = World(tmp_path)
    other_cap = parse_capability("debug[python]")
    w.attest(20, age_hours=1, cap=other_cap)
    w.attest(20, age_hours=1, signer=generate_identity())
    res = resolve_cartridge(w.store, "1.0.0", w.trust, now=NOW)
    assert res.capabilities[0].effective == "unproven"
    assert [u.codes for u in res.unmatched] == [("capability_not_claimed",)]
    assert "issuer_untrusted" in res.capabilities[0].rejected[0].codes


def test_expired_and_not_yet_valid(tmp_path: Path) -> None:
    w = World(tmp_path)
    w.attest(20, age_hours=24 * 40)  # validUntil = validFrom + 30 days: expired
    w.attest(20, age_hours=-5)  # validFrom in the future
    cap = resolve_cartridge(w.store, "1.0.0", w.trust, now=NOW).capabilities[0]
    codes = sorted(c for r in cap.rejected for c in r.codes)
    assert cap.effective == "unproven" and "expired" in codes and "not_yet_valid" in codes


def test_self_issuance_is_caught_by_key_not_just_by_name(tmp_path: Path) -> None:
    """A trusted did:web verifier whose key also signed the ROM (as a did:key) is self-issuing."""
    from acx_oci.crypto import identity_from_seed

    w = World(tmp_path)
    verifier_web = identity_from_seed(w.verifier.seed, "did:web:verifier.example")
    same_key_publisher = identity_from_seed(w.verifier.seed)  # did:key of the verifier's key
    init_directory(tmp_path / "own", "io.example/own", "1.0.0", [CAP])
    w.pushed = push_directory(w.store, tmp_path / "own", same_key_publisher, "own")
    w.trust = Trust(verifiers=[Party(verifier_web.did, verifier_web.did_document())], benchmarks=w.trust.benchmarks,
                    solvers=("rom", "reference"))
    url = f"https://status.example/lists/{uuid.uuid4()}"
    w.url = url
    publish_status_list(w.store, statuslist.sign_status_list(
        statuslist.new_status_list(list_url=url, issuer=verifier_web.did, valid_from=NOW - timedelta(days=1)),
        verifier_web, verifier_web.verification_method, NOW - timedelta(days=1)))
    w.attest(20, age_hours=1, signer=verifier_web)
    cap = resolve_cartridge(w.store, "own", w.trust, now=NOW).capabilities[0]
    assert cap.effective == "unproven"
    assert "self_issued" in cap.rejected[0].codes, cap.rejected
    assert any("same key" in m for m in cap.rejected[0].messages)


def test_unverifiable_signer_name_is_reported_as_its_key(tmp_path: Path) -> None:
    """A ROM signature claiming did:web:innocent.example is reported as the did:key that signed it."""
    from acx_oci.crypto import did_key, identity_from_seed
    from acx_oci.services.artifacts import load_cartridge

    key = generate_identity()
    liar = identity_from_seed(key.seed, "did:web:innocent.example")
    init_directory(tmp_path / "a", "io.example/a", "1.0.0", [CAP])
    store = open_store(f"oci:{tmp_path / 'l'}:1")
    push_directory(store, tmp_path / "a", liar, "1")
    cart = load_cartridge(store, "1", None)
    assert cart.signature_status == "warning"
    assert cart.signer == did_key(key.public_bytes) and cart.signature.claimed_signer == "did:web:innocent.example"
    # trusting the name makes it 'valid' only with the trust file's own DID document for it
    trusted = Trust(publishers=[Party("did:web:innocent.example", liar.did_document())])
    assert load_cartridge(store, "1", trusted).signature_status == "valid"
    other = Trust(publishers=[Party("did:web:innocent.example", generate_identity("did:web:innocent.example")
                                    .did_document())])
    assert load_cartridge(store, "1", other).signature_status == "tampered"
