"""Hostile referrers next to an honest attestation (attack review): the honest claim must stay VERIFIED.

Each hostile referrer is pushed to the real registry with the cartridge manifest as its subject, within the
documented bounds (fewer than --max-referrers).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from acx_oci.crypto import sha256_digest
from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, start_in_thread
from acx_oci.oci import (
    ANNOTATION_TITLE,
    ARTIFACT_ATTESTATION,
    EMPTY_JSON,
    MEDIA_DSSE,
    MEDIA_EMPTY,
    MEDIA_INDEX,
    MEDIA_MANIFEST,
    MEDIA_VC,
    Descriptor,
    Store,
    build_manifest,
    open_store,
    parse_manifest,
    referrer_tag,
)
from acx_oci.oci.registry.referrers import fallback_tag
from acx_oci.services.artifacts import ANN_CAPABILITY, load_cartridge
from acx_oci.services.consumer import ResolveLimits, resolve_loaded
from acx_oci.trust import load_trust

from ..support.cli import cli, ok
from ..support.policy_world import World, attest, build_world, push_cartridge


def push_referrer(store: Store, subject: Descriptor, layers: list[Descriptor], annotations: dict[str, str]) -> str:
    raw = build_manifest(ARTIFACT_ATTESTATION, layers, subject=subject, annotations=annotations)
    return store.push_referrer(raw, subject.digest, referrer_tag(parse_manifest(raw).digest, subject.digest)).digest


@pytest.fixture(scope="module")
def world(registry: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[World, str, dict[str, Any]]:
    w = build_world(registry, tmp_path_factory.mktemp("world"))
    d = tmp_path_factory.mktemp("atk")
    ref = w.ref("referrer-attacks")
    digest = push_cartridge(w, d / "cart", ref, "io.github.acme/referrer-attacks")
    honest = attest(w, ref, d / "out", d / "state")
    store = open_store(ref)
    cap_id = load_cartridge(store, digest, None).capabilities[0].id
    subject = Descriptor(MEDIA_MANIFEST, digest, store.resolve(digest).size)
    honest_manifest = store.fetch_manifest(honest["attestationDigest"])
    return w, ref, {"store": store, "subject": subject, "cap": cap_id, "honest": honest,
                    "manifest": honest_manifest, "out": d / "out"}


def resolve(w: World, ref: str, *extra: str) -> dict[str, Any]:
    doc: dict[str, Any] = ok(cli("resolve", ref, "--trust", str(w.trust), "--json", *extra))
    return doc


def test_a_copy_of_the_honest_credential_without_its_game_records_does_not_poison_check_evidence(
        world: tuple[World, str, dict[str, Any]]) -> None:
    """The credential verdict was cached by credential digest while the evidence judged was the attestation's own:
    a referrer carrying the honest credential layer and no game records, judged first (fewer blobs to fetch),
    made the honest attestation an evidence_mismatch under --check-evidence."""
    w, ref, s = world
    credential_layer = s["manifest"].layers[0]
    copycat = push_referrer(s["store"], s["subject"], [credential_layer], {ANN_CAPABILITY: s["cap"]})
    for _ in range(3):  # the judging order is the fetch order: try it more than once
        doc = resolve(w, ref, "--check-evidence")
        cap = doc["capabilities"][0]
        assert cap["effective"] == "VERIFIED", cap["rejected"]
        rejected = {r["digest"]: r for r in cap["rejected"]}
        assert "evidence_missing" in rejected[copycat]["codes"], cap["rejected"]  # (named, not carried)
        assert s["honest"]["attestationDigest"] not in rejected
    cap = resolve(w, ref)["capabilities"][0]  # without --check-evidence: the copy fails its replay, not the honest one
    assert cap["effective"] == "VERIFIED" and cap["attestationDigest"] == s["honest"]["attestationDigest"], cap


def credential_with(out: Any, edit: Any) -> bytes:
    doc = json.loads((out / "credential.json").read_bytes())
    edit(doc)
    return json.dumps(doc).encode()


def test_lone_surrogates_in_a_hostile_referrer_crash_nothing(world: tuple[World, str, dict[str, Any]]) -> None:
    """``"\\ud800"`` is valid JSON syntax but no UTF-8 text (RFC 7493 forbids it): read, it is refused."""
    w, ref, s = world
    raw = credential_with(s["out"], lambda d: d["credentialSubject"]["result"][0].update(
        {"acx:capabilityId": "x\ud800y", "acx:careerTier": "\udfff"}))
    assert b"\\ud800" in raw
    layer = s["store"].push_blob(raw, MEDIA_VC, {ANNOTATION_TITLE: "credential.json"})
    s["store"].push_blob(EMPTY_JSON, MEDIA_EMPTY)
    push_raw_referrer(s["store"], s["subject"], [layer], {ANN_CAPABILITY: "y\ud800"})
    running = start_in_thread(GatewayConfig(upstream=f"http://{w.registry}", policy=load_policy(w.policy),
                                            trust=load_trust(w.trust)))
    try:  # the gateway's referrers answer re-encodes the entries it lists (a 500 while the hostile one was read)
        listing = httpx.get(f"http://{running.address}/v2/acx/referrer-attacks/referrers/{s['subject'].digest}",
                            timeout=60)
    finally:
        running.stop()
    assert listing.status_code == 200, listing.text
    assert s["honest"]["attestationDigest"] in {m["digest"] for m in listing.json()["manifests"]}
    for extra in ((), ("--json",)):
        res = cli("resolve", ref, "--trust", str(w.trust), *extra)
        assert res.exit_code == 0, (res.output, res.exception)
        assert ("SIMULATED tier=" if not extra else '"effective": "VERIFIED"') in res.output
    # an honest writer that merges its referrer into that fallback index next: it died of a UnicodeEncodeError
    # re-encoding the hostile entry; the index is now refused as not UTF-8 text, and replaced
    later = push_referrer(s["store"], s["subject"], [layer], {ANN_CAPABILITY: s["cap"], "n": "after"})
    listed = {d.digest for d in s["store"].referrers(s["subject"].digest).descriptors}
    assert {later, s["honest"]["attestationDigest"]} <= listed
    doc = resolve(w, ref)
    assert doc["capabilities"][0]["effective"] == "VERIFIED", doc


def push_raw_referrer(store: Store, subject: Descriptor, layers: list[Descriptor], annotations: dict[str, str],
                      names: Descriptor | None = None) -> str:
    """A referrer written as ASCII JSON by hand, listed in ``subject``'s fallback index (``\\ud800`` escapes stay
    escapes: our own writers would refuse to encode them); ``names``: the subject the manifest itself names."""
    doc = json.loads(build_manifest(ARTIFACT_ATTESTATION, layers, subject=names or subject))
    doc["annotations"] = annotations
    raw = json.dumps(doc).encode()
    digest = store.push_manifest(raw, MEDIA_MANIFEST, referrer_tag(sha256_digest(raw), subject.digest)).digest
    index = json.loads(store.fetch_manifest_raw(fallback_tag(subject.digest))[0])
    index["manifests"].append({"mediaType": MEDIA_MANIFEST, "digest": digest, "size": len(raw),
                               "artifactType": ARTIFACT_ATTESTATION, "annotations": annotations})
    store.push_manifest(json.dumps(index).encode(), MEDIA_INDEX, fallback_tag(subject.digest))
    return digest


def test_a_huge_proof_value_is_refused_before_it_is_decoded(world: tuple[World, str, dict[str, Any]]) -> None:
    """Base58 decoding is quadratic: a copy of the honest credential (the trusted issuer's name on it) with a
    proofValue of 2 MB (the credential cap) would hold resolve — and a gateway evaluation — for some 40 minutes
    (measured: 160,000 characters 15 s, 320,000 61 s). Refused by length now; 20,000 keep this test fast either way."""
    w, ref, s = world
    def huge(d: dict[str, Any]) -> None:  # claimed newer than the honest one, so it is verified first
        d["validFrom"] = "2099-01-01T00:00:00Z"
        (d["proof"][0] if isinstance(d["proof"], list) else d["proof"]).update({"proofValue": "z" + "Z" * 20_000})

    raw = credential_with(s["out"], huge)
    layer = s["store"].push_blob(raw, MEDIA_VC, {ANNOTATION_TITLE: "credential.json"})
    hostile = push_referrer(s["store"], s["subject"], [layer], {ANN_CAPABILITY: s["cap"]})
    cap = resolve(w, ref)["capabilities"][0]
    assert cap["effective"] == "VERIFIED", cap["rejected"]
    rejected = {r["digest"]: r for r in cap["rejected"]}
    assert "at most 256 base58btc characters" in " ".join(rejected[hostile]["messages"]), rejected[hostile]


def test_higher_level_forgeries_and_strangers_leave_the_honest_claim_verified(
        world: tuple[World, str, dict[str, Any]]) -> None:
    """What held: a copy claiming level 99 (proof now invalid), one naming another subject but listed under this
    one, and one offered for this claim but proving another capability; the honest one decides, at its level."""
    w, ref, s = world

    def level(d: dict[str, Any]) -> None:
        d["credentialSubject"]["result"][0]["acx:acxLevel"] = 99

    def stranger(d: dict[str, Any]) -> None:
        d["credentialSubject"]["result"][0]["acx:capabilityId"] = "acx-cap:sha256:" + "0" * 64

    pushed = {}
    for name, edit in (("level", level), ("stranger", stranger)):
        layer = s["store"].push_blob(credential_with(s["out"], edit), MEDIA_VC, {ANNOTATION_TITLE: "credential.json"})
        pushed[name] = push_referrer(s["store"], s["subject"], [layer], {ANN_CAPABILITY: s["cap"]})
    other = Descriptor(MEDIA_MANIFEST, "sha256:" + "cd" * 32, 10)
    pushed["subject"] = push_raw_referrer(s["store"], s["subject"], list(s["manifest"].layers), {}, names=other)
    doc = resolve(w, ref)
    cap = doc["capabilities"][0]
    assert cap["effective"] == "VERIFIED" and cap["attestationDigest"] == s["honest"]["attestationDigest"], cap
    assert cap["acxLevel"] < 99
    rejected = {r["digest"]: r["codes"] for r in cap["rejected"]}
    # The copy is as new as the honest one: verified newest first, whichever of the two comes first decides the
    # other's fate — tried and refused (proof_invalid), or never tried once the honest one verified (superseded).
    assert {"proof_invalid", "superseded"} & set(rejected[pushed["level"]]), rejected
    assert "capability_mismatch" in rejected[pushed["stranger"]], rejected
    assert "subject_mismatch" in rejected[pushed["subject"]], rejected


def test_many_referrers_naming_one_large_blob_count_it_once(world: tuple[World, str, dict[str, Any]],
                                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    """Dozens of tiny manifests naming the honest credential blob were each fetched and counted against the byte
    bound: a bound that the unique bytes fit was exhausted (partial) before the honest attestation was judged.
    Each blob is now fetched once per resolution, keyed by digest and size."""
    w, _, _ = world
    d = tmp_path_factory.mktemp("bytes")
    ref = w.ref("byte-bound")
    digest = push_cartridge(w, d / "cart", ref, "io.github.acme/byte-bound")
    honest = attest(w, ref, d / "out", d / "state")
    store = open_store(ref)
    cart = load_cartridge(store, digest, None)
    subject = Descriptor(MEDIA_MANIFEST, digest, store.resolve(digest).size)
    layer = store.fetch_manifest(honest["attestationDigest"]).layers[0]
    copies = 40
    for i in range(copies):
        push_referrer(store, subject, [layer], {ANN_CAPABILITY: cart.capabilities[0].id, "n": str(i)})
    bound = 8 * layer.size + 256 * 1024  # the unique bytes fit; 40 counted copies of the credential do not
    assert copies * layer.size > bound
    res = resolve_loaded(store, cart, load_trust(w.trust), limits=ResolveLimits(max_bytes=bound),
                         now=datetime.now(UTC))
    doc = res.to_json()
    assert not res.partial, doc.get("notes", doc)
    assert res.capabilities[0].effective == "VERIFIED", doc


class CountingStore:
    """The real registry store, counting the blob bytes a resolution pulls into memory."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.blob_bytes = 0

    def fetch_blob(self, digest: str, max_bytes: int = 0, size: int | None = None) -> bytes:
        data = self.inner.fetch_blob(digest, max_bytes, size=size)
        self.blob_bytes += len(data)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_one_referrer_with_many_evidence_layers_cannot_pull_past_the_byte_bound(
        world: tuple[World, str, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> None:
    """The byte bound was only checked as each fetched attestation was judged: one tiny manifest listing dozens of
    distinct evidence blobs (each under the 2 MiB per-blob cap) had all of them read into memory first, so a
    manifest's worth of layers (~25 000) could pull tens of GiB. The bound now stops fetching as it is reached."""
    w, _, _ = world
    d = tmp_path_factory.mktemp("evidence-flood")
    ref = w.ref("evidence-flood")
    digest = push_cartridge(w, d / "cart", ref, "io.github.acme/evidence-flood")
    store = open_store(ref)
    cart = load_cartridge(store, digest, None)
    subject = Descriptor(MEDIA_MANIFEST, digest, store.resolve(digest).size)
    vc = store.push_blob(b'{"not": "a credential"}', MEDIA_VC)
    chunk = 64 * 1024
    layers = [store.push_blob(bytes([i]) * chunk, MEDIA_DSSE) for i in range(48)]
    push_referrer(store, subject, [vc, *layers], {ANN_CAPABILITY: cart.capabilities[0].id})
    bound = 256 * 1024
    counting = CountingStore(store)
    res = resolve_loaded(counting, cart, load_trust(w.trust),  # type: ignore[arg-type]
                         limits=ResolveLimits(max_bytes=bound), now=datetime.now(UTC), check_evidence=True)
    assert res.partial, res.to_json()
    assert any("byte bound" in n for n in res.notes), res.notes
    # the bound plus at most one blob in flight per worker; all 48 layers were 3 MiB
    assert counting.blob_bytes <= bound + ResolveLimits().workers * chunk, counting.blob_bytes
