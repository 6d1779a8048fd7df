"""Copy manifests and blobs from one store to another: exact bytes, digests preserved.

A copy is planned first (every manifest read and digest-verified, so the total
is known before a byte of blob moves), then executed: missing blobs stream
across (each read verified against its digest, each write checked against
the digest the destination reports), manifests go up children first, and
referrers are pushed after their subject. On a registry without the
Referrers API the ``sha256-<hex>`` tag-schema index is written once per
subject with every referrer's ``artifactType`` and annotations taken from the
referrer manifests themselves (not from the source's index, which a
``skopeo copy`` may have stripped).
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from acx_oci.errors import IntegrityError, UsageError
from acx_oci.jsonio import loads_ijson
from acx_oci.oci.layout import LayoutStore
from acx_oci.oci.model import (
    MEDIA_DOCKER_LIST,
    MEDIA_INDEX,
    MEDIA_MANIFEST,
    Descriptor,
    Manifest,
    parse_index,
    parse_manifest,
)
from acx_oci.oci.referrers import descriptor_for_referrer
from acx_oci.oci.registry.client import RegistryStore
from acx_oci.oci.registry.referrers import api_support, referrers_api
from acx_oci.oci.store import Store
from acx_oci.timeutil import carry_deadline

MAX_INDEX_DEPTH = 4
MAX_PLAN_MANIFESTS = 10_000
MAX_PLAN_MANIFEST_BYTES = 256 * 1024 * 1024  # 10,000 referrers of 4 MiB each would be 40 GB
STREAM_THRESHOLD = 8 * 1024 * 1024  # blobs above this go through a temporary file, not memory
BLOB_WORKERS = 8

# (bytes done, bytes total, what is happening)
Progress = Callable[[int, int, str], None]


@dataclass
class PlannedManifest:
    """One manifest to copy: its exact bytes, where it hangs, and the blobs it needs."""

    raw: bytes
    media_type: str
    digest: str
    tag: str | None = None
    subject: str | None = None  # set for referrers: pushed after the subject, listed in its index
    referrer: Descriptor | None = None  # the index entry (artifactType, annotations) for a referrer
    manifest: Manifest | None = None  # parsed, for image manifests


@dataclass
class CopyPlan:
    """Manifests in push order (children before parents) and every blob they reference."""

    manifests: list[PlannedManifest] = field(default_factory=list)
    blobs: dict[str, Descriptor] = field(default_factory=dict)
    manifest_bytes: int = 0

    @property
    def total_bytes(self) -> int:
        """Bytes of every distinct blob in the plan: what a copy moves at most, for progress."""
        return sum(d.size for d in self.blobs.values())

    def add_image(self, item: PlannedManifest) -> None:
        """Add a parsed image manifest with its config and layers."""
        assert item.manifest is not None
        self.add(item, [item.manifest.config, *item.manifest.layers])

    def add(self, item: PlannedManifest, blobs: list[Descriptor]) -> None:
        """Add a manifest once per (digest, tag) and its blobs once per digest; UsageError past the plan's bounds."""
        if len(self.manifests) >= MAX_PLAN_MANIFESTS:
            raise UsageError(f"copy: more than {MAX_PLAN_MANIFESTS} manifests; refusing an unbounded copy")
        if any(m.digest == item.digest and m.tag == item.tag for m in self.manifests):
            return
        if self.manifest_bytes + len(item.raw) > MAX_PLAN_MANIFEST_BYTES:  # held in memory until pushed
            raise UsageError(f"copy: more than {MAX_PLAN_MANIFEST_BYTES} bytes of manifests; refusing an unbounded "
                             "copy")
        self.manifest_bytes += len(item.raw)
        self.manifests.append(item)
        for b in blobs:
            self.blobs.setdefault(b.digest, b)


def _is_index(raw: bytes, media_type: str) -> bool:
    if media_type in (MEDIA_INDEX, MEDIA_DOCKER_LIST):
        return True
    try:
        doc = loads_ijson(raw)
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("manifests"), list) and "layers" not in doc


def plan_tree(src: Store, target: str, plan: CopyPlan, tag: str | None = None, *, depth: int = 0) -> PlannedManifest:
    """Add the manifest ``target`` names (and, for an index, its children first) to ``plan``."""
    raw, media_type, digest = src.fetch_manifest_raw(target)  # digest-verified by the store
    item = PlannedManifest(raw, media_type, digest, tag)
    if _is_index(raw, media_type):
        if depth >= MAX_INDEX_DEPTH:
            raise UsageError(f"copy: image indexes nested deeper than {MAX_INDEX_DEPTH} levels under {target}")
        for child in parse_index(raw, f"index {digest}"):
            plan_tree(src, child.digest, plan, depth=depth + 1)
        plan.add(item, [])
        return item
    if media_type == MEDIA_MANIFEST:
        item.manifest = parse_manifest(raw, f"manifest {digest}")
        blobs = [item.manifest.config, *item.manifest.layers]
    else:  # a Docker schema 2 manifest: same shape, no artifactType or subject
        doc = loads_ijson(raw)
        layers = doc.get("layers") if isinstance(doc, dict) else None
        if not isinstance(layers, list):
            raise UsageError(f"manifest {digest}: expected a config and a layers array ({media_type})")
        blobs = [Descriptor.from_json(doc.get("config"), f"manifest {digest} config"),
                 *(Descriptor.from_json(x, f"manifest {digest} layer") for x in layers)]
    plan.add(item, blobs)
    return item


def read_referrer(src: Store, digest: str, subject: str) -> PlannedManifest:
    """A listed referrer of ``subject``, read digest-verified (not yet planned); its index entry comes from
    its own manifest, never from the source's listing (which a ``skopeo copy`` may have stripped).
    ``subject`` on the result is what the manifest names (the caller drops one naming another)."""
    raw, media_type, actual = src.fetch_manifest_raw(digest)
    manifest = parse_manifest(raw, f"referrer {digest}")
    named = manifest.subject.digest if manifest.subject else None
    return PlannedManifest(raw, media_type, actual, None, named, descriptor_for_referrer(manifest), manifest)


def _blob_exists(dst: Store, digest: str) -> bool:
    return isinstance(dst, RegistryStore | LayoutStore) and dst.blob_exists(digest)


def _mount(src: Store, dst: Store, digest: str) -> bool:
    """Cross-repository mount within one registry (no bytes move; the registry links its own
    content-addressed blob). False when not applicable or refused (then the bytes are copied)."""
    if not (isinstance(src, RegistryStore) and isinstance(dst, RegistryStore)) or src.host != dst.host \
            or src.repository == dst.repository:
        return False
    resp = dst.transport.request("POST", f"{dst.base}blobs/uploads/", params={"mount": digest, "from": src.repository},
                                 headers={"Content-Length": "0"})
    resp.close()
    echoed = resp.headers.get("Docker-Content-Digest")
    return resp.status_code == 201 and (echoed is None or echoed == digest)


def _copy_blob(src: Store, dst: Store, desc: Descriptor) -> None:
    """One blob across, exact bytes: verified on read, and the destination must name it the same."""
    if desc.size > STREAM_THRESHOLD and isinstance(dst, LayoutStore):
        dest = dst.blob_file(desc.digest)  # streamed to a temporary file beside it, renamed once verified
        src.fetch_blob_to_file(desc.digest, dest, size=desc.size)  # stops at the size (not at the 4 GiB cap)
        if dest.stat().st_size != desc.size:
            dest.unlink()
            raise IntegrityError(f"blob {desc.digest}: {desc.size} bytes in its descriptor, not what was read")
        return
    if desc.size > STREAM_THRESHOLD:
        with tempfile.TemporaryDirectory(prefix="acx-copy-") as tmp:
            path = Path(tmp) / "blob"
            src.fetch_blob_to_file(desc.digest, path, size=desc.size)
            if path.stat().st_size != desc.size:
                raise IntegrityError(f"blob {desc.digest}: {path.stat().st_size} bytes, its descriptor says "
                                     f"{desc.size}")
            written = dst.push_blob_file(path, desc.media_type)
    else:
        data = src.fetch_blob(desc.digest, max_bytes=max(desc.size, 0))
        if len(data) != desc.size:
            raise IntegrityError(f"blob {desc.digest}: {len(data)} bytes, its descriptor says {desc.size}")
        written = dst.push_blob(data, desc.media_type)
    if written.digest != desc.digest:
        raise IntegrityError(f"blob {desc.digest}: the destination stored it as {written.digest}")


@dataclass
class CopyCounts:
    """What ``copy_blobs`` did: copied, mounted across repositories, or already present at the destination."""

    blobs_copied: int = 0
    blobs_mounted: int = 0
    blobs_present: int = 0
    bytes_copied: int = 0
    manifests: int = 0


def copy_blobs(src: Store, dst: Store, plan: CopyPlan, progress: Progress | None = None,
               workers: int = BLOB_WORKERS) -> CopyCounts:
    """Every blob of the plan the destination lacks, ``workers`` at a time; progress counts bytes."""
    counts = CopyCounts()
    total = plan.total_bytes
    done = 0
    lock = threading.Lock()

    def one(desc: Descriptor) -> None:
        nonlocal done
        present = _blob_exists(dst, desc.digest)
        mounted = not present and _mount(src, dst, desc.digest)
        if not (present or mounted):
            _copy_blob(src, dst, desc)
        with lock:
            done += desc.size
            if present:
                counts.blobs_present += 1
            elif mounted:
                counts.blobs_mounted += 1
            else:
                counts.blobs_copied += 1
                counts.bytes_copied += desc.size
            if progress is not None:
                progress(done, total, f"blob {desc.digest[7:19]}")

    if progress is not None:
        progress(0, total, "blobs")
    blobs = sorted(plan.blobs.values(), key=lambda d: -d.size)  # big ones first: the pool stays busy
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for fut in [pool.submit(carry_deadline(one), d) for d in blobs]:
            fut.result()
    return counts


def push_manifests(dst: Store, plan: CopyPlan) -> int:
    """Push every manifest in plan order; referrers after the rest, indexed per subject. Returns the count."""
    others = [m for m in plan.manifests if m.subject is None]
    referrers = [m for m in plan.manifests if m.subject is not None]
    for m in others:
        dst.push_manifest(m.raw, m.media_type, m.tag)
    by_subject: dict[str, list[PlannedManifest]] = {}
    for m in referrers:
        by_subject.setdefault(str(m.subject), []).append(m)
    for subject, items in by_subject.items():
        _push_referrers(dst, subject, items)
    return len(plan.manifests)


def _push_referrers(dst: Store, subject: str, items: list[PlannedManifest]) -> None:
    """Referrers of one subject: on a registry, manifest PUTs then one index write when it has no
    Referrers API (not one read-merge-write per referrer); elsewhere ``push_referrer`` for each."""
    if not isinstance(dst, RegistryStore):
        for m in items:
            dst.push_referrer(m.raw, subject, m.tag)
        return
    for m in items:
        dst.push_manifest(m.raw, m.media_type, m.tag)
    has_api = api_support(dst.host)
    if has_api is None:
        has_api = referrers_api(dst, subject, None) is not None
    if has_api:
        return
    entries = [m.referrer for m in items if m.referrer is not None]
    after = dst.write_referrers_index(subject, entries)
    missing = {e.digest for e in entries} - {d.digest for d in after}
    untagged = {m.digest for m in items if m.tag is None}
    if missing & untagged:
        raise IntegrityError(f"could not record {len(missing & untagged)} referrer(s) of {subject} in the "
                             "destination's referrers index")

