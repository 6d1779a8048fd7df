"""Hostile referrers next to an honest attestation (attack review): the honest claim must stay VERIFIED.

Each hostile referrer is pushed to the real registry with the cartridge manifest as its subject, within the
documented bounds (fewer than --max-referrers).
"""

from __future__ import annotations

from typing import Any

import pytest

from acx_oci.oci.model import ARTIFACT_ATTESTATION, MEDIA_MANIFEST, Descriptor, build_manifest, parse_manifest
from acx_oci.oci.open import open_store
from acx_oci.oci.referrers import referrer_tag
from acx_oci.oci.store import Store
from acx_oci.services.attestation import ANN_CAPABILITY
from acx_oci.services.cartridge import load_cartridge

from .support.cli import cli, ok
from .support.policy_world import World, attest, build_world, push_cartridge


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
        assert "evidence_mismatch" in rejected[copycat]["codes"], cap["rejected"]
        assert s["honest"]["attestationDigest"] not in rejected
    cap = resolve(w, ref)["capabilities"][0]  # without --check-evidence: the copy fails its replay, not the honest one
    assert cap["effective"] == "VERIFIED" and cap["attestationDigest"] == s["honest"]["attestationDigest"], cap
