"""LayoutStore: an OCI image layout on disk, read back by skopeo."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
from pathlib import Path

import pytest

from acx_oci.crypto import sha256_digest
from acx_oci.errors import IntegrityError, NotFoundError, UsageError
from acx_oci.oci import (
    ARTIFACT_ATTESTATION,
    ARTIFACT_CARTRIDGE,
    EMPTY_DIGEST,
    MAX_MANIFEST_BYTES,
    MEDIA_MANIFEST,
    Descriptor,
    build_manifest,
    open_store,
    parse_reference,
)
from acx_oci.oci.layout import LayoutStore


def _layout(path: Path) -> LayoutStore:
    return LayoutStore(parse_reference(f"oci:{path}"))


def _push_cartridge(s: LayoutStore, tag: str, content: bytes = b"rom") -> tuple[bytes, Descriptor]:
    layer = s.push_blob(content, "application/octet-stream")
    raw = build_manifest(ARTIFACT_CARTRIDGE, [layer])
    return raw, s.push_manifest(raw, MEDIA_MANIFEST, tag)


def test_layout_created_on_first_push_and_skopeo_reads_it(tmp_path: Path) -> None:
    root = tmp_path / "lay"
    s = _layout(root)
    assert s.list_tags() == []
    raw, d = _push_cartridge(s, "v1")
    assert json.loads((root / "oci-layout").read_bytes()) == {"imageLayoutVersion": "1.0.0"}
    index = json.loads((root / "index.json").read_bytes())
    assert index["schemaVersion"] == 2
    assert index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"] == "v1"
    assert (root / "blobs" / "sha256" / EMPTY_DIGEST.split(":")[1]).read_bytes() == b"{}"
    out = subprocess.run(["skopeo", "inspect", "--raw", f"oci:{root}:v1"], capture_output=True, timeout=30)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout == raw
    assert s.fetch_manifest_raw("v1") == (raw, MEDIA_MANIFEST, d.digest)
    assert s.fetch_manifest_raw(d.digest)[0] == raw
    assert s.resolve("v1") == d
    assert isinstance(open_store(f"oci:{root}:v1"), LayoutStore)


def test_tags_move_and_old_manifest_stays_reachable(tmp_path: Path) -> None:
    s = _layout(tmp_path / "lay")
    _, d1 = _push_cartridge(s, "v1", b"one")
    _, d2 = _push_cartridge(s, "v1", b"two")
    assert s.resolve("v1").digest == d2.digest
    assert s.resolve(d1.digest).digest == d1.digest
    s.tag(d1.digest, "old")
    assert sorted(s.list_tags()) == ["old", "v1"]
    entries = json.loads((tmp_path / "lay" / "index.json").read_bytes())["manifests"]
    assert len(entries) == 2  # d1 untagged entry replaced by its tagged one
    with pytest.raises(NotFoundError):
        s.fetch_manifest_raw("nope")
    with pytest.raises(NotFoundError):
        s.fetch_blob("sha256:" + "0" * 64)


def test_tampered_blob_detected(tmp_path: Path) -> None:
    s = _layout(tmp_path / "lay")
    d = s.push_blob(b"trusted bytes", "text/plain")
    raw, m = _push_cartridge(s, "v1", b"trusted rom")
    blob = tmp_path / "lay" / "blobs" / "sha256" / d.digest.split(":")[1]
    blob.write_bytes(b"tampered bytes")
    with pytest.raises(IntegrityError, match="digest mismatch"):
        s.fetch_blob(d.digest)
    with pytest.raises(IntegrityError):
        s.fetch_blob_to_file(d.digest, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    mblob = tmp_path / "lay" / "blobs" / "sha256" / m.digest.split(":")[1]
    mblob.write_bytes(raw.replace(b"cartridge", b"cartridgE"))
    with pytest.raises(IntegrityError):
        s.fetch_manifest_raw("v1")


def test_oversize_manifest_refused_on_push_and_read(tmp_path: Path) -> None:
    s = _layout(tmp_path / "lay")
    big = b'{"schemaVersion":2,"annotations":{"x":"' + b"a" * MAX_MANIFEST_BYTES + b'"}}'
    with pytest.raises(UsageError, match="over 4194304"):
        s.push_manifest(big, MEDIA_MANIFEST, "big")
    # smuggle an oversize manifest in: a blob listed in index.json under a tag
    d = s.push_blob(big, MEDIA_MANIFEST)
    idx_path = tmp_path / "lay" / "index.json"
    idx = json.loads(idx_path.read_bytes())
    idx["manifests"].append({**d.to_json(), "annotations": {"org.opencontainers.image.ref.name": "big"}})
    idx_path.write_text(json.dumps(idx))
    with pytest.raises(UsageError, match="exceeds the 4194304-byte limit"):
        s.fetch_manifest_raw("big")


def test_blob_file_streaming_and_max_bytes(tmp_path: Path) -> None:
    s = _layout(tmp_path / "lay")
    src = tmp_path / "src.bin"
    src.write_bytes(b"q" * (3 * 1024 * 1024 + 7))
    d = s.push_blob_file(src, "application/octet-stream")
    assert d.digest == sha256_digest(src.read_bytes()) and d.size == src.stat().st_size
    s.fetch_blob_to_file(d.digest, tmp_path / "back.bin")
    assert (tmp_path / "back.bin").read_bytes() == src.read_bytes()
    with pytest.raises(UsageError, match="limit"):
        s.fetch_blob(d.digest, max_bytes=1024)


def _writer(args: tuple[str, int]) -> str:
    root, i = args
    s = LayoutStore(parse_reference(f"oci:{root}"))
    layer = s.push_blob(f"layer {i}".encode(), "text/plain")
    raw = build_manifest(ARTIFACT_ATTESTATION, [layer], annotations={"i": str(i)})
    return s.push_manifest(raw, MEDIA_MANIFEST, f"t{i}").digest


def test_concurrent_process_writers_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "lay"
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(8) as pool:
        digests = pool.map(_writer, [(str(root), i) for i in range(32)])
    s = _layout(root)
    assert sorted(s.list_tags()) == sorted(f"t{i}" for i in range(32))
    assert {s.resolve(f"t{i}").digest for i in range(32)} == set(digests)


def test_layout_referrers_by_subject(tmp_path: Path) -> None:
    s = _layout(tmp_path / "lay")
    _, cart = _push_cartridge(s, "v1")
    _, other = _push_cartridge(s, "v2", b"other rom")
    subject = Descriptor(MEDIA_MANIFEST, cart.digest, cart.size)
    pushed = []
    for i, at in enumerate([ARTIFACT_ATTESTATION, ARTIFACT_ATTESTATION, "application/vnd.example.sbom"]):
        raw = build_manifest(at, [s.push_blob(f"a{i}".encode(), "application/vc")], subject=subject,
                             annotations={"n": str(i)})
        pushed.append(s.push_referrer(raw, cart.digest, f"acx-att-{i}" if i == 0 else None))
    # a referrer of the other cartridge must not show up
    s.push_referrer(build_manifest(ARTIFACT_ATTESTATION, [], subject=Descriptor(MEDIA_MANIFEST, other.digest,
                                                                                  other.size)), other.digest)
    listing = s.referrers(cart.digest)
    assert listing.source == "scan" and not listing.partial
    found = listing.descriptors
    assert [d.digest for d in found] == [d.digest for d in pushed]
    assert found[0].annotations == {"n": "0"} and found[0].artifact_type == ARTIFACT_ATTESTATION
    only = s.referrers(cart.digest, ARTIFACT_ATTESTATION).descriptors
    assert [d.digest for d in only] == [d.digest for d in pushed[:2]]
    # a fresh store (no cache) sees the same, and they are listed in index.json
    fresh = _layout(tmp_path / "lay").referrers(cart.digest).descriptors
    assert [d.digest for d in fresh] == [d.digest for d in pushed]
    listed = {e["digest"] for e in json.loads((tmp_path / "lay" / "index.json").read_bytes())["manifests"]}
    assert {d.digest for d in pushed} <= listed
    with pytest.raises(UsageError, match="subject must be"):
        s.push_referrer(build_manifest(ARTIFACT_ATTESTATION, []), cart.digest)
