"""Evidence replay, capability binding, instants and I-JSON, on an OCI image layout (real crypto, no mocks).

A credential's numbers must be what its own game records replay to: the same trusted key signing
mu=40, sigma=1 over honest records is ``evidence_mismatch``, and so are dropped, reordered and
foreign-ROM records. The deciding credential is the newest valid one per capability and benchmark;
when it fails replay the next one decides.
"""

from __future__ import annotations

import copy
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import canonical, dataintegrity, generate_identity, sha256_digest
from acx_oci.errors import SchemaError
from acx_oci.evaluation import replay_credential
from acx_oci.jsonio import parse_json
from acx_oci.model import (
    LevelCredential,
    Resolution,
    gamerecords,
    level_for,
    level_result,
    parse_capability,
    statuslist,
)
from acx_oci.model.credential import LevelClaim, build_level_credential, evidence_item, sign_credential
from acx_oci.oci import (
    ARTIFACT_ATTESTATION,
    EMPTY_JSON,
    MEDIA_DSSE,
    MEDIA_EMPTY,
    MEDIA_MANIFEST,
    MEDIA_VC,
    Descriptor,
    Store,
    build_manifest,
    open_store,
    referrer_tag,
)
from acx_oci.services.artifacts import init_directory, publish_status_list, push_attestation, push_directory
from acx_oci.services.artifacts.attestation import attestation_annotations, build_attestation
from acx_oci.services.consumer import replay as replay_service
from acx_oci.services.consumer import resolve_cartridge
from acx_oci.trust import AcceptedBenchmark, Party, Trust
from acx_oci.trust.trustfile import trust_from_dict

from ..support.games import Played, play_level

NOW = datetime.now(UTC).replace(microsecond=0)
BENCH = "sha256:" + "b" * 64
HELD = "sha256:" + "c" * 64
CAP = parse_capability("build-dag[snowflake+airflow+dbt]@data-engineering")
OTHER_CAP = parse_capability("debug[python]")


class World:
    def __init__(self, tmp: Path, caps: tuple[Any, ...] = (CAP,)) -> None:
        self.publisher, self.verifier = generate_identity(), generate_identity()
        init_directory(tmp / "agent", "io.example/agent", "1.0.0", list(caps))
        self.store: Store = open_store(f"oci:{tmp / 'layout'}:1.0.0")
        self.pushed = push_directory(self.store, tmp / "agent", self.publisher, "1.0.0")
        self.url = f"https://status.example/lists/{uuid.uuid4()}"
        publish_status_list(self.store, statuslist.sign_status_list(
            statuslist.new_status_list(list_url=self.url, issuer=self.verifier.did, valid_from=NOW - timedelta(days=2)),
            self.verifier, self.verifier.verification_method, NOW - timedelta(days=2)))
        self.trust = Trust(verifiers=[Party(self.verifier.did)],
                           benchmarks=[AcceptedBenchmark("bench", "1", BENCH, HELD)], solvers=("rom", "reference"))
        self.index = 0
        self.played: dict[int, Played] = {}

    def play(self, level: int) -> Played:
        if level not in self.played:
            self.played[level] = play_level(self.verifier, self.pushed.rom_digest, BENCH, level)
        return self.played[level]

    def credential(self, played: Played, *, age_hours: float = 1, cap: Any = CAP,
                   evidence: list[dict[str, Any]] | None = None, **override: Any) -> dict[str, Any]:
        """An unsigned credential over ``played`` (fields overridden as given)."""
        self.index += 1
        when = NOW - timedelta(hours=age_hours)
        claims = {**played.claims(), **override}
        return build_level_credential(LevelClaim(previous_version="none",
            issuer_did=self.verifier.did, subject_id="urn:acx:cartridge:x", capability_id=cap.id, **claims,
            rom_digest=self.pushed.rom_digest, manifest_digest=self.pushed.manifest_digest, benchmark_id="bench",
            benchmark_version="1", benchmark_digest=BENCH, held_out_slice_digest=HELD,
            evidence=evidence if evidence is not None else played.evidence(),
            status_entry=statuslist.status_entry(self.url, self.index), valid_from=when,
            valid_until=when + timedelta(days=30), achievement_name="level"))

    def sign(self, cred: dict[str, Any]) -> dict[str, Any]:
        return sign_credential(cred, self.verifier, self.verifier.verification_method, NOW - timedelta(days=1))

    def push(self, cred: dict[str, Any], records: list[bytes], raw: bytes | None = None) -> str:
        subject = self.store.resolve(self.pushed.manifest_digest)
        if raw is None:
            return push_attestation(self.store, subject, canonical(cred), records).digest
        # bytes our own push would refuse (not I-JSON): the layers and manifest by hand
        self.store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
        layers = [self.store.push_blob(raw, MEDIA_VC)] + [self.store.push_blob(r, MEDIA_DSSE) for r in records]
        manifest = build_manifest(ARTIFACT_ATTESTATION, layers,
                                  subject=Descriptor(MEDIA_MANIFEST, subject.digest, subject.size),
                                  annotations=attestation_annotations(LevelCredential.document(cred)))
        return self.store.push_referrer(manifest, subject.digest,
                                        referrer_tag(sha256_digest(manifest), subject.digest)).digest

    def resolve(self, **kw: Any) -> Resolution:
        return resolve_cartridge(self.store, "1.0.0", self.trust, now=NOW, **kw)


def inflated(w: World, played: Played, **kw: Any) -> dict[str, Any]:
    """The attack: the same trusted key signs mu=40, sigma=1 (a consistent legend) over the honest records."""
    level, tier = level_for(40.0, 1.0)
    return w.sign(w.credential(played, rating_mu=40.0, rating_sigma=1.0, acx_level=level, career_tier=tier, **kw))


def codes_and_messages(res: Resolution) -> tuple[list[str], str]:
    cap = res.capabilities[0]
    return [c for r in cap.rejected for c in r.codes], " ".join(m for r in cap.rejected for m in r.messages)


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    replay_service.clear_cache()


def test_honest_credential_replays_and_says_so(tmp_path: Path) -> None:
    w = World(tmp_path)
    played = w.play(25)
    w.push(w.sign(w.credential(played)), played.raws)
    res = w.resolve()
    cap = res.capabilities[0]
    assert cap.effective == "VERIFIED" and cap.best is not None and cap.best.acx_level == 25, cap.rejected
    assert res.replayed is True and res.to_json()["replayed"] is True
    assert replay_service.cached_verdicts() == 1


def test_inflated_resigned_by_the_same_trusted_key_is_evidence_mismatch(tmp_path: Path) -> None:
    w = World(tmp_path)
    played = w.play(25)
    w.push(inflated(w, played), played.raws)
    res = w.resolve()
    codes, messages = codes_and_messages(res)
    assert res.capabilities[0].effective == "unproven"
    assert codes == ["evidence_mismatch"]
    assert "acx:ratingMu: the credential says 40," in messages and repr(played.rating.mu) in messages
    assert "acx:acxLevel: the credential says 37" in messages and "give 25" in messages
    # --no-replay believes the key (weaker) and says so
    off = w.resolve(replay=False)
    assert off.capabilities[0].effective == "VERIFIED" and off.capabilities[0].best.career_tier == "legend"
    assert off.replayed is False and off.to_json()["replayed"] is False
    assert any("--no-replay" in n and "weaker" in n for n in off.notes)


def test_a_failing_newest_credential_hands_the_decision_to_the_next(tmp_path: Path) -> None:
    w = World(tmp_path)
    honest = w.play(20)
    w.push(w.sign(w.credential(honest, age_hours=48)), honest.raws)  # older, honest
    w.push(inflated(w, honest, age_hours=1), honest.raws)  # newest, inflated
    older_still = w.play(30)
    w.push(w.sign(w.credential(older_still, age_hours=96)), older_still.raws)  # superseded: never replayed
    res = w.resolve()
    cap = res.capabilities[0]
    assert cap.effective == "VERIFIED" and cap.best is not None and cap.best.acx_level == 20
    # the oldest is listed superseded (issue 23) without ever being replayed
    assert sorted(r.codes for r in cap.rejected) == [("evidence_mismatch",), ("superseded",)]
    assert replay_service.cached_verdicts() == 2  # the inflated one and the honest one; not the oldest


def test_dropped_records_are_evidence_mismatch(tmp_path: Path) -> None:
    w = World(tmp_path)
    played = w.play(25)
    # the credential names all records, the attestation carries one fewer
    w.push(w.sign(w.credential(played)), played.raws[:-1])
    # the credential names one record fewer (re-signed), claiming the same numbers
    short = w.sign(w.credential(played, evidence=played.evidence()[:-1]))
    w.push(short, played.raws[:-1])
    cap = w.resolve().capabilities[0]
    assert cap.effective == "unproven"
    assert sorted(r.codes for r in cap.rejected) == [("evidence_mismatch",), ("evidence_missing",)]
    assert any("acx:gamesPlayed" in m for r in cap.rejected for m in r.messages)


def test_dropped_record_with_matching_counts_still_fails_on_the_numbers(tmp_path: Path) -> None:
    w = World(tmp_path)
    played = w.play(25)
    short = w.sign(w.credential(played, evidence=played.evidence()[:-1]))
    w.push(short, played.raws[:-1])
    codes, messages = codes_and_messages(w.resolve())
    assert codes == ["evidence_mismatch"]
    assert "acx:gamesPlayed: the credential says 89, the replayed game records give 88" in messages


def test_reordered_records_are_evidence_mismatch(tmp_path: Path) -> None:
    w = World(tmp_path)
    played = w.play(25)
    ev = played.evidence()
    ev[2], ev[3] = ev[3], ev[2]
    for i, item in enumerate(ev, 1):
        item["acx:game"] = i
    w.push(w.sign(w.credential(played, evidence=ev)), played.raws)
    codes, messages = codes_and_messages(w.resolve())
    assert codes == ["evidence_mismatch"] and "game number 4 where game 3 belongs" in messages


def test_a_record_swapped_for_one_of_another_rom_is_evidence_mismatch(tmp_path: Path) -> None:
    w = World(tmp_path)
    played = w.play(25)
    foreign_rom = "sha256:" + "e" * 64
    other = play_level(w.verifier, foreign_rom, BENCH, 25)  # same key, same game numbers, another ROM
    records = list(played.records)
    records[4] = other.records[4]
    swapped = Played(records, played.rating, played.rated, played.passes)
    w.push(w.sign(w.credential(swapped)), swapped.raws)
    codes, messages = codes_and_messages(w.resolve())
    assert codes == ["evidence_mismatch"]
    assert f"romDigest (acx:cartridgeRomDigest): the credential says {w.pushed.rom_digest}" in messages
    assert foreign_rom in messages


def test_records_signed_by_another_key_are_evidence_signature(tmp_path: Path) -> None:
    w = World(tmp_path)
    stranger = generate_identity()
    played = play_level(stranger, w.pushed.rom_digest, BENCH, 25)
    w.push(w.sign(w.credential(played)), played.raws)
    codes, _ = codes_and_messages(w.resolve())
    assert codes == ["evidence_signature"]


def test_stored_ratings_are_not_trusted(tmp_path: Path) -> None:
    """Records whose ratingAfter was written to agree with an inflated credential fail the recomputation."""
    w = World(tmp_path)
    played = w.play(25)
    last = dict(played.records[-1].predicate)
    last["ratingAfter"] = {"mu": 40.0, "sigma": 1.0}
    forged = gamerecords.sign_game(last, w.verifier)
    records = [*played.records[:-1], forged]
    fake = Played(records, played.rating, played.rated, played.passes)
    level, tier = level_for(40.0, 1.0)
    cred = w.sign(w.credential(fake, rating_mu=40.0, rating_sigma=1.0, acx_level=level, career_tier=tier))
    check = replay_credential(LevelCredential.document(cred), fake.raws, [w.verifier.public_bytes])
    assert not check.ok and check.code == "evidence_mismatch" and "ratingAfter" in check.message


def test_replay_verdicts_are_cached_by_credential_digest(tmp_path: Path) -> None:
    w = World(tmp_path)
    played = w.play(25)
    w.push(w.sign(w.credential(played)), played.raws)
    w.resolve()
    assert replay_service.cached_verdicts() == 1
    replay_service.MAX_CACHED_VERDICTS, saved = 1, replay_service.MAX_CACHED_VERDICTS
    try:
        w.resolve()
        assert replay_service.cached_verdicts() == 1  # a hit, not a second entry
    finally:
        replay_service.MAX_CACHED_VERDICTS = saved


# --------------------------------------------------------------------------- capability binding

def test_credential_for_capability_a_offered_for_claim_b_is_capability_mismatch(tmp_path: Path) -> None:
    w = World(tmp_path)  # the cartridge claims only CAP (B here)
    played = w.play(25)
    cred = w.sign(w.credential(played, cap=OTHER_CAP))  # a credential for capability A
    subject = w.store.resolve(w.pushed.manifest_digest)
    raw, desc = build_attestation(w.store, subject, canonical(cred), played.raws)
    doc = json.loads(raw)
    doc["annotations"]["dev.acx.capability.id"] = CAP.id  # offered for claim B
    raw = build_manifest(doc["artifactType"], [Descriptor.from_json(x) for x in doc["layers"]],
                         subject=Descriptor(MEDIA_MANIFEST, subject.digest, subject.size),
                         annotations=doc["annotations"])
    w.store.push_referrer(raw, subject.digest, referrer_tag(sha256_digest(raw), subject.digest))
    res = w.resolve()
    codes, messages = codes_and_messages(res)
    assert res.capabilities[0].effective == "unproven"
    assert "capability_mismatch" in codes and OTHER_CAP.id in messages
    _ = desc


def test_benchmark_pinned_to_another_capability_is_capability_mismatch(tmp_path: Path) -> None:
    w = World(tmp_path)
    played = w.play(25)
    w.push(w.sign(w.credential(played)), played.raws)
    pinned = trust_from_dict({"verifiers": [{"id": w.verifier.did}], "solvers": ["rom", "reference"],
                              "benchmarks": [{"id": "bench", "version": "1", "digest": BENCH,
                                              "heldOutSliceDigest": HELD, "capability": "debug[python]"}]},
                             tmp_path)
    res = resolve_cartridge(w.store, "1.0.0", pinned, now=NOW)
    codes, messages = codes_and_messages(res)
    assert codes == ["capability_mismatch"] and "measures debug[python]" in messages
    right = trust_from_dict({"verifiers": [{"id": w.verifier.did}], "solvers": ["rom", "reference"],
                             "benchmarks": [{"id": "bench", "version": "1", "digest": BENCH,
                                             "capability": "build-dag[snowflake+airflow+dbt]@data-engineering"}]},
                            tmp_path)
    assert resolve_cartridge(w.store, "1.0.0", right, now=NOW).capabilities[0].effective == "VERIFIED"
    by_id = trust_from_dict({"verifiers": [{"id": w.verifier.did}], "solvers": ["rom", "reference"],
                             "benchmarks": [{"id": "bench", "version": "1", "digest": BENCH, "capability": CAP.id}]},
                            tmp_path)
    assert resolve_cartridge(w.store, "1.0.0", by_id, now=NOW).capabilities[0].effective == "VERIFIED"


# --------------------------------------------------------------------------- instants, not text

def test_valid_from_with_an_offset_is_ordered_by_instant_not_text(tmp_path: Path) -> None:
    """10:00-05:00 is 15:00Z: newer than 14:00Z, though "10" < "14" as text."""
    w = World(tmp_path)
    low, high = w.play(20), w.play(30)
    day = (NOW - timedelta(days=1)).strftime("%Y-%m-%d")
    offset = w.credential(low)
    offset["validFrom"] = f"{day}T10:00:00-05:00"  # 15:00Z
    utc = w.credential(high)
    utc["validFrom"] = f"{day}T14:00:00Z"
    for cred in (offset, utc):
        cred["validUntil"] = (NOW + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    w.push(w.sign(offset), low.raws)
    w.push(w.sign(utc), high.raws)
    cap = w.resolve().capabilities[0]
    assert cap.effective == "VERIFIED" and cap.best is not None
    assert cap.best.valid_from == f"{day}T10:00:00-05:00" and cap.best.acx_level == 20


# --------------------------------------------------------------------------- I-JSON

def _duplicate_level(cred: dict[str, Any], value: int) -> bytes:
    """The credential's JSON with ``acx:acxLevel`` written twice (the second wins in most parsers)."""
    text = json.dumps(cred)
    first = f'"acx:acxLevel": {level_result(cred)["acx:acxLevel"]}'  # type: ignore[index]
    assert text.count(first) == 1
    return text.replace(first, f'{first}, "acx:acxLevel": {value}').encode()


def test_duplicate_member_is_refused_schema_invalid(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match='duplicate member name "acx:acxLevel"') as exc:
        parse_json(b'{"acx:acxLevel": 5, "acx:acxLevel": 40}', "credential")
    assert exc.value.code == "schema_invalid"
    w = World(tmp_path)
    played = w.play(25)
    cred = w.sign(w.credential(played))
    w.push(cred, played.raws, raw=_duplicate_level(cred, 40))
    res = w.resolve()
    codes, messages = codes_and_messages(res)
    assert res.capabilities[0].effective == "unproven" or not res.capabilities[0].best
    rejected = [*res.capabilities[0].rejected, *res.unmatched]
    assert any("schema_invalid" in r.codes for r in rejected), rejected
    assert any('duplicate member name "acx:acxLevel"' in m for r in rejected for m in r.messages)
    _ = codes, messages


def test_duplicate_members_in_records_and_manifests_are_refused(tmp_path: Path) -> None:
    from acx_oci.oci import parse_manifest

    manifest = build_manifest("application/x", [], annotations={"a": "b"})
    dup = manifest.replace(b'"schemaVersion":2', b'"schemaVersion":2,"schemaVersion":2')
    with pytest.raises(SchemaError, match='duplicate member name "schemaVersion"'):
        parse_manifest(dup)
    w = World(tmp_path)
    played = w.play(25)
    env = copy.deepcopy(played.records[0].envelope)
    raw = json.dumps(env).replace('"payloadType"', '"payloadType": "x", "payloadType"', 1).encode()
    with pytest.raises(SchemaError, match='duplicate member name "payloadType"'):
        gamerecords.verify_game(raw, [w.verifier.public_bytes])
    status = statuslist.sign_status_list(statuslist.new_status_list(
        list_url=w.url, issuer=w.verifier.did, valid_from=NOW), w.verifier, w.verifier.verification_method, NOW)
    text = json.dumps(status).replace('"id"', '"id": "x", "id"', 1)
    with pytest.raises(SchemaError, match='duplicate member name "id"'):
        parse_json(text, "status list")
    _ = dataintegrity, evidence_item
