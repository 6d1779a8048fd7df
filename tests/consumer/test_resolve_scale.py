"""Resolve at scale (issue 25): one game-records layer, the old one-layer-per-record layout, a forged-newer
flood that costs one verification per forgery, and the consumer's verdict cache. Real crypto; an OCI image
layout store on disk where bytes must travel."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta
from pathlib import Path

from acx_oci.crypto import canonical, counting_verifications, generate_identity, sha256_digest
from acx_oci.evaluation import Judgement, Material, capability_verdicts
from acx_oci.evaluation.judge import judge_credentials
from acx_oci.jsonio import parse_json
from acx_oci.model import LevelCredential
from acx_oci.oci import (
    ARTIFACT_ATTESTATION,
    EMPTY_JSON,
    MEDIA_DSSE,
    MEDIA_EMPTY,
    MEDIA_MANIFEST,
    MEDIA_VC,
    Descriptor,
    build_manifest,
    referrer_tag,
)
from acx_oci.services.artifacts import split_records
from acx_oci.services.artifacts.attestation import MEDIA_GAME_RECORDS, attestation_annotations
from acx_oci.services.consumer import StatusHistory
from acx_oci.services.consumer import replay as replay_service
from acx_oci.services.consumer.resolve import known_proofs
from acx_oci.services.consumer.verdictcache import FILE, TrustView, VerifiedCredentialCache

from .test_judge_supersede import NOW, Issuers, attestation
from .test_replay import World


def _judge(w: Issuers, raws: list[bytes], known: TrustView | None = None) -> tuple[Judgement, int]:
    """Judge as resolve does: the proof cache read into the input beforehand, the new proofs kept after."""
    m = Material(tuple(attestation(r) for r in raws), w.lists())
    m = dataclasses.replace(m, known_proofs=known_proofs(m, known))
    with counting_verifications() as sigs:
        judgement = judge_credentials(m, w.facts, w.trust, NOW)
    for digest, keys in judgement.proofs_verified.items() if known is not None else ():
        known.remember(digest, keys)
    return judgement, sigs[0]


def _forged(w: Issuers, signer: object, minutes: int) -> bytes:
    doc = parse_json(w.credential(signer, 16, age_hours=1), "credential")  # type: ignore[arg-type]
    doc["validFrom"] = (NOW - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")  # edited after signing
    return canonical(doc)


def test_fifty_forged_newer_credentials_cost_fifty_failed_verifications() -> None:
    v = generate_identity()
    w = Issuers(v)
    valid = w.credential(v, 32, age_hours=48)
    older = [w.credential(v, 30, age_hours=72 + i) for i in range(5)]  # superseded: never verified
    forged = [_forged(w, v, i) for i in range(1, 51)]
    alone, s_alone = _judge(w, [valid])
    one, s_one = _judge(w, [valid, forged[0]])
    flood, s_flood = _judge(w, [*forged, valid, *older])
    assert (alone.verifications, one.verifications, flood.verifications) == (1, 2, 51)
    per_forgery = s_one - s_alone
    assert per_forgery >= 1 and s_flood - s_alone == 50 * per_forgery, (s_alone, s_one, s_flood)
    (cap,) = capability_verdicts(w.facts, flood.accepted, flood.rejected)
    assert cap.best is not None and cap.best.credential_digest == sha256_digest(valid)
    by_digest = {r.credential_digest: r for r in cap.rejected}
    assert all("proof_invalid" in by_digest[sha256_digest(f)].codes for f in forged)
    for o in older:
        assert by_digest[sha256_digest(o)].codes == ("superseded",)
        assert "not verified" in by_digest[sha256_digest(o)].messages[0]


def test_the_verdict_cache_spares_the_second_judgement_its_signature_work(tmp_path: Path) -> None:
    v = generate_identity()
    w = Issuers(v)
    valid = w.credential(v, 32, age_hours=48)
    cache = VerifiedCredentialCache(tmp_path)
    first, s_first = _judge(w, [valid], known=cache.view(w.trust))
    cache.flush()
    again, s_again = _judge(w, [valid], known=VerifiedCredentialCache(tmp_path).view(w.trust))
    assert first.accepted == again.accepted and len(again.accepted[next(iter(again.accepted))]) == 1
    lists_only = 1  # the status list's proof is checked every time: it changes daily
    assert s_first > lists_only and s_again == lists_only, (s_first, s_again)
    # another trust file: the entry is not its
    other_trust = dataclasses.replace(w.trust, sigma_max=1.4)
    _, s_other = _judge(w, [valid], known=VerifiedCredentialCache(tmp_path).view(other_trust))
    assert s_other == s_first


def test_a_corrupt_or_foreign_cache_entry_is_never_believed(tmp_path: Path) -> None:
    v, mallory = generate_identity(), generate_identity()
    w = Issuers(v)
    valid = w.credential(v, 32, age_hours=48)
    _, s_first = _judge(w, [valid])
    (tmp_path / FILE).write_bytes(b"{not json")
    _, s = _judge(w, [valid], known=VerifiedCredentialCache(tmp_path).view(w.trust))
    assert s == s_first
    # an entry naming another key (say, planted for a forgery signed by mallory): the proof is checked again
    forged = _forged(w, v, 5)
    key = f"{sha256_digest(forged)}|" + VerifiedCredentialCache(tmp_path).view(w.trust).trust
    (tmp_path / FILE).write_text(json.dumps({"version": 1, "entries": {key: {"keys": [mallory.public_bytes.hex()]}}}))
    judgement, _ = _judge(w, [forged, valid], known=VerifiedCredentialCache(tmp_path).view(w.trust))
    (cap,) = capability_verdicts(w.facts, judgement.accepted, judgement.rejected)
    assert cap.best is not None and cap.best.credential_digest == sha256_digest(valid)
    assert any("proof_invalid" in r.codes for r in cap.rejected if r.credential_digest == sha256_digest(forged))


def test_an_attestation_carries_its_records_in_one_layer_and_replay_fetches_one_blob(tmp_path: Path) -> None:
    replay_service.clear_cache()
    w = World(tmp_path)
    played = w.play(25)
    digest = w.push(w.sign(w.credential(played)), played.raws)
    manifest = w.store.fetch_manifest(digest)
    assert [d.media_type for d in manifest.layers] == [MEDIA_VC, MEDIA_GAME_RECORDS]
    records = split_records(w.store.fetch_blob(manifest.layers[1].digest, 1 << 24))
    assert list(records) == [r.digest for r in played.records]  # each envelope keeps its own digest
    res = w.resolve()
    assert res.capabilities[0].effective == "VERIFIED", res.capabilities[0].rejected
    assert res.phases is not None and res.phases["replay"]["blobs"] == 1
    assert res.phases["replay"]["signatures"] == len(played.records)
    assert w.resolve(check_evidence=True).capabilities[0].effective == "VERIFIED"


def test_an_old_attestation_with_one_layer_per_record_still_resolves_and_replays(tmp_path: Path) -> None:
    replay_service.clear_cache()
    w = World(tmp_path)
    played = w.play(25)
    cred = w.sign(w.credential(played))
    subject = w.store.resolve(w.pushed.manifest_digest)
    w.store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    layers = [w.store.push_blob(canonical(cred), MEDIA_VC)] + [w.store.push_blob(r, MEDIA_DSSE) for r in played.raws]
    raw = build_manifest(ARTIFACT_ATTESTATION, layers, subject=Descriptor(MEDIA_MANIFEST, subject.digest, subject.size),
                         annotations=attestation_annotations(LevelCredential.document(cred)))
    w.store.push_referrer(raw, subject.digest, referrer_tag(sha256_digest(raw), subject.digest))
    res = w.resolve()
    assert res.capabilities[0].effective == "VERIFIED", res.capabilities[0].rejected
    assert res.replayed and res.phases is not None
    assert res.phases["replay"]["blobs"] == len(played.raws) - 1  # game 1 travels inline in the credential
    assert w.resolve(check_evidence=True).capabilities[0].effective == "VERIFIED"


def test_a_second_resolve_replays_from_the_consumer_cache(tmp_path: Path) -> None:
    replay_service.clear_cache()
    w = World(tmp_path)
    played = w.play(25)
    w.push(w.sign(w.credential(played)), played.raws)
    history = StatusHistory(tmp_path / "cache")
    first = w.resolve(status_history=history)
    replay_service.clear_cache()  # a new process: only the file remembers
    second = w.resolve(status_history=history)
    assert first.capabilities[0].effective == second.capabilities[0].effective == "VERIFIED"
    assert first.phases is not None and second.phases is not None
    assert first.phases["replay"]["signatures"] == len(played.records) and first.phases["replay"]["blobs"] == 1
    assert second.phases["replay"]["signatures"] == 0 and second.phases["replay"]["blobs"] == 0
    assert second.phases["verify"]["signatures"] < first.phases["verify"]["signatures"]
