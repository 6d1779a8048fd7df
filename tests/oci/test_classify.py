"""Referrers listed without a usable artifactType are classified by their manifests (skopeo copies,
registries that report the config media type); the OCI layout finds referrers in nested indexes."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from acx_oci.errors import NotFoundError
from acx_oci.oci import (
    ARTIFACT_ATTESTATION,
    ARTIFACT_CARTRIDGE,
    CONFIG_MEDIA_TYPES,
    MEDIA_EMPTY,
    MEDIA_INDEX,
    MEDIA_MANIFEST,
    Descriptor,
    RegistryStore,
    StoreOptions,
    build_index,
    build_manifest,
    classify_referrers,
    fallback_tag,
    parse_reference,
)
from acx_oci.oci.classify import needs_classification
from acx_oci.oci.layout import LayoutStore

from ..support.cli import cli, ok
from ..support.resolve_world import build_resolve_world

SBOM = "application/vnd.example.sbom.v1"


def _store(registry: str, repo: str, scan: bool = False) -> RegistryStore:
    if scan:
        return RegistryStore(parse_reference(f"{registry}/{repo}"), StoreOptions())
    return RegistryStore(parse_reference(f"{registry}/{repo}"), StoreOptions(), fallback_scan=None)


def _cartridge(s: RegistryStore | LayoutStore, tag: str = "v1") -> Descriptor:
    layer = s.push_blob(uuid.uuid4().bytes, "application/octet-stream")
    raw = build_manifest(ARTIFACT_CARTRIDGE, [layer])
    d = s.push_manifest(raw, MEDIA_MANIFEST, tag)
    return Descriptor(MEDIA_MANIFEST, d.digest, d.size)


def _referrer_raw(s: RegistryStore | LayoutStore, subject: Descriptor, n: str, at: str = ARTIFACT_ATTESTATION) -> bytes:
    layer = s.push_blob(f"credential {n} {uuid.uuid4()}".encode(), "application/vc")
    return build_manifest(at, [layer], subject=subject, annotations={"acx.n": n})


def _bare(d: Descriptor, artifact_type: str | None = None) -> Descriptor:
    """The descriptor as ``skopeo copy --all`` writes it into an index: no artifactType, no annotations."""
    return Descriptor(d.media_type, d.digest, d.size, {}, artifact_type)


def test_needs_classification() -> None:
    dg = "sha256:" + "a" * 64
    assert needs_classification(Descriptor(MEDIA_MANIFEST, dg, 1))
    assert needs_classification(Descriptor(MEDIA_MANIFEST, dg, 1, artifact_type=MEDIA_EMPTY))
    assert MEDIA_EMPTY in CONFIG_MEDIA_TYPES
    assert not needs_classification(Descriptor(MEDIA_MANIFEST, dg, 1, artifact_type=ARTIFACT_ATTESTATION))
    assert not needs_classification(Descriptor(MEDIA_INDEX, dg, 1))  # only image manifests are fetched


def test_untyped_index_entries_are_classified(registry: str) -> None:
    """A ``sha256-<hex>`` index as skopeo copies it (no artifactType, no annotations) and no own tags:
    the attestation is still found under its type, with its annotations, and the count says so."""
    s = _store(registry, "classify/skopeo")
    subject = _cartridge(s)
    other = _cartridge(s, "v2")
    att = s.push_manifest(_referrer_raw(s, subject, "1"), MEDIA_MANIFEST)
    sbom = s.push_manifest(_referrer_raw(s, subject, "2", SBOM), MEDIA_MANIFEST)
    stray = s.push_manifest(_referrer_raw(s, other, "3"), MEDIA_MANIFEST)  # names another subject
    pushed = s.push_manifest(_referrer_raw(s, subject, "4"), MEDIA_MANIFEST)
    typed = Descriptor(MEDIA_MANIFEST, pushed.digest, pushed.size, {"listed": "yes"}, ARTIFACT_ATTESTATION)
    entries = [_bare(att), _bare(sbom, MEDIA_EMPTY), _bare(stray), typed]
    s.push_manifest(build_index(entries), MEDIA_INDEX, fallback_tag(subject.digest))

    listing = _store(registry, "classify/skopeo").referrers(subject.digest, ARTIFACT_ATTESTATION)
    assert [d.digest for d in listing.descriptors] == [att.digest, typed.digest]
    first = listing.descriptors[0]
    assert first.artifact_type == ARTIFACT_ATTESTATION and first.annotations == {"acx.n": "1"}
    assert listing.descriptors[1].annotations == {"listed": "yes"}  # a typed entry is not refetched
    assert listing.classified == 2 and not listing.partial
    assert any("classified by fetching their manifests" in n and "dropped" in n for n in listing.notes)

    everything = _store(registry, "classify/skopeo").referrers(subject.digest)
    assert {d.digest: d.artifact_type for d in everything.descriptors} == {
        att.digest: ARTIFACT_ATTESTATION, sbom.digest: SBOM, typed.digest: ARTIFACT_ATTESTATION}


def test_classification_is_bounded(registry: str) -> None:
    s = _store(registry, "classify/bound")
    subject = _cartridge(s)
    refs = [s.push_manifest(_referrer_raw(s, subject, str(i)), MEDIA_MANIFEST) for i in range(5)]
    c = classify_referrers(s, subject.digest, [_bare(d) for d in refs], max_fetches=3)
    assert c.truncated and c.classified == 3 and c.dropped == 0
    assert [d.artifact_type for d in c.descriptors] == [ARTIFACT_ATTESTATION] * 3 + [None] * 2
    # what was fetched is remembered (content-addressed): the next listing classifies all five
    again = classify_referrers(s, subject.digest, [_bare(d) for d in refs], max_fetches=2)
    assert again.classified == 5 and not again.truncated


def test_layout_finds_referrers_in_nested_and_tag_schema_indexes(tmp_path: Path) -> None:
    lay = LayoutStore(parse_reference(f"oci:{tmp_path / 'lay'}"))
    subject = _cartridge(lay)
    deep_raw = _referrer_raw(lay, subject, "deep")
    deep = lay.push_blob(deep_raw, MEDIA_MANIFEST)  # a manifest blob that index.json does not list
    top_raw = _referrer_raw(lay, subject, "top")
    top = lay.push_blob(top_raw, MEDIA_MANIFEST)
    inner = lay.push_blob(build_index([_bare(deep)]), MEDIA_INDEX)
    gone = Descriptor(MEDIA_MANIFEST, "sha256:" + "d" * 64, 5)  # partial copy: blob absent, skipped
    lay.push_manifest(build_index([_bare(top), inner, gone]), MEDIA_INDEX, fallback_tag(subject.digest))
    listing = LayoutStore(parse_reference(f"oci:{tmp_path / 'lay'}")).referrers(subject.digest, ARTIFACT_ATTESTATION)
    assert sorted(d.digest for d in listing.descriptors) == sorted([deep.digest, top.digest])
    assert all(d.artifact_type == ARTIFACT_ATTESTATION for d in listing.descriptors)
    assert not listing.partial


@pytest.mark.slow
def test_skopeo_copied_tag_schema_index_into_layout(registry: str, tmp_path: Path) -> None:
    """``skopeo copy --all`` of the ``sha256-<hex>`` index, registry -> registry and -> oci: layout."""
    s = _store(registry, "classify/src", scan=True)
    subject = _cartridge(s)
    att = s.push_referrer(_referrer_raw(s, subject, "1"), subject.digest)
    tag = fallback_tag(subject.digest)
    for dst in (f"docker://{registry}/classify/dst:{tag}", f"oci:{tmp_path / 'lay'}:{tag}"):
        for src_tag, dst_ref in ((tag, dst), ("v1", dst.rsplit(":", 1)[0] + ":v1")):
            out = subprocess.run(["skopeo", "copy", "--all", "--src-tls-verify=false", "--dest-tls-verify=false",
                                  f"docker://{registry}/classify/src:{src_tag}", dst_ref],
                                 capture_output=True, timeout=60)
            assert out.returncode == 0, out.stderr.decode()
    copied = _store(registry, "classify/dst", scan=True)
    raw, _, _ = copied.fetch_manifest_raw(tag)
    assert "artifactType" not in json.loads(raw)["manifests"][0]  # what skopeo does to the index
    listing = copied.referrers(subject.digest, ARTIFACT_ATTESTATION)
    assert [d.digest for d in listing.descriptors] == [att.digest] and listing.classified == 1
    lay = LayoutStore(parse_reference(f"oci:{tmp_path / 'lay'}"))
    assert [d.digest for d in lay.referrers(subject.digest, ARTIFACT_ATTESTATION).descriptors] == [att.digest]


def test_ggcr_listing_with_config_media_type_is_classified(ggcr: str) -> None:
    """go-containerregistry lists ``artifactType: application/vnd.oci.empty.v1+json`` (the config's type)
    for every OCI 1.1 artifact, ignores the filter and sends no OCI-Subject: the client classifies and
    filters itself."""
    s = _store(ggcr, "classify/ggcr", scan=True)
    subject = _cartridge(s)
    att = s.push_referrer(_referrer_raw(s, subject, "1"), subject.digest)
    sbom = s.push_referrer(_referrer_raw(s, subject, "2", SBOM), subject.digest)
    raw = s.transport.request("GET", f"{s.base}referrers/{subject.digest}",
                              params={"artifactType": ARTIFACT_ATTESTATION}).content
    listed = json.loads(raw)["manifests"]
    assert {m["artifactType"] for m in listed} == {MEDIA_EMPTY} and len(listed) == 2  # what ggcr says
    fresh = _store(ggcr, "classify/ggcr", scan=True)
    listing = fresh.referrers(subject.digest, ARTIFACT_ATTESTATION)
    assert listing.source == "api" and [d.digest for d in listing.descriptors] == [att.digest]
    assert listing.descriptors[0].annotations == {"acx.n": "1"} and listing.classified == 2
    assert {d.digest: d.artifact_type for d in fresh.referrers(subject.digest).descriptors} == {
        att.digest: ARTIFACT_ATTESTATION, sbom.digest: SBOM}
    with pytest.raises(NotFoundError):  # the API path wrote no fallback index
        fresh.fetch_manifest_raw(fallback_tag(subject.digest))


def test_unknown_repository_on_ggcr_does_not_mark_the_host_without_api(ggcr: str) -> None:
    """ggcr answers 404 NAME_UNKNOWN for a repository that holds nothing: that says nothing about the host."""
    from acx_oci.oci import api_support

    s = _store(ggcr, "classify/api-known")
    subject = _cartridge(s)
    s.referrers(subject.digest)
    assert api_support(ggcr) is True
    empty = _store(ggcr, f"classify/nothing-{uuid.uuid4().hex[:8]}").referrers("sha256:" + "1" * 64)
    assert empty.descriptors == [] and api_support(ggcr) is True


def test_resolve_after_skopeo_copy_is_verified_and_says_it_classified(registry: str, tmp_path: Path) -> None:
    """``skopeo copy --all`` of the cartridge, its ``sha256-<hex>`` index and its status tag (no acx-att- tags):
    resolve stays VERIFIED, with ``classifiedByManifest`` and a note, not unproven with ``referrersSeen: 0``."""
    w = build_resolve_world(tmp_path, registry)
    src = f"{registry}/{w.repo}"
    tags = _store(registry, w.repo).list_tags()
    status = [t for t in tags if t.startswith("acx-status-")]
    wanted = ["1.0.0", fallback_tag(w.cart["manifestDigest"]), *status]
    layout = tmp_path / "layout"
    for tag in wanted:
        for dst in (f"docker://{registry}/copied/strong:{tag}", f"oci:{layout}:{tag}"):
            out = subprocess.run(["skopeo", "copy", "--all", "--src-tls-verify=false", "--dest-tls-verify=false",
                                  f"docker://{src}:{tag}", dst], capture_output=True, timeout=120)
            assert out.returncode == 0, out.stderr.decode()
    assert not any(t.startswith("acx-att-") for t in _store(registry, "copied/strong").list_tags())
    doc = ok(cli("resolve", f"{registry}/copied/strong:1.0.0", "--trust", str(w.trust), "--json"))
    assert doc["capabilities"][0]["effective"] == "VERIFIED", doc
    assert doc["referrersSeen"] == 1 and doc["classifiedByManifest"] == 2  # the attestation and its cosign bundle
    assert any("classified by fetching their manifests" in n for n in doc["notes"])
    human = ok(cli("resolve", f"{registry}/copied/strong:1.0.0", "--trust", str(w.trust)))
    assert "SIMULATED tier=" in human
    assert "note: 2 referrer(s) listed without a usable artifactType" in human
    # the same copy as an oci: layout: the attestation is found inside the tag-schema index
    lay = ok(cli("resolve", f"oci:{layout}:1.0.0", "--trust", str(w.trust), "--json"))
    assert lay["capabilities"][0]["effective"] == "VERIFIED" and lay["referrersSeen"] == 1, lay
