"""Referrer entries as the spec wants them listed, whatever the upstream listed: image indexes (an index with a
``subject``, a signature over several platforms say, has no config, so the project's manifest parser and a listing's
config-derived ``artifactType`` both miss it), and manifests an upstream's API lists without their annotations."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from acx_oci.crypto import sha256_digest
from acx_oci.errors import AcxError, UsageError
from acx_oci.jsonio import parse_json
from acx_oci.oci import (
    MEDIA_INDEX,
    MEDIA_MANIFEST,
    Descriptor,
    RegistryStore,
    classify_referrers,
    descriptor_for_referrer,
    parse_manifest,
    subject_digest_of,
)

INDEX_READS = 64  # bare index entries one listing reads (a listing of thousands stays cheap)


def referrer_descriptor(raw: bytes) -> Descriptor:
    """The referrers-index entry for a manifest *or image index* with a subject (an index's ``artifactType`` is its
    own field or none; its annotations are kept as for a manifest)."""
    doc = parse_json(raw, "referrer manifest")
    if isinstance(doc, dict) and doc.get("mediaType") == MEDIA_INDEX:
        at, ann = doc.get("artifactType"), doc.get("annotations") or {}
        if not isinstance(ann, dict):
            raise UsageError("referrer index: annotations must be an object")
        return Descriptor(MEDIA_INDEX, sha256_digest(raw), len(raw), {str(k): str(v) for k, v in ann.items()},
                          at if isinstance(at, str) else None)
    return descriptor_for_referrer(parse_manifest(raw, "referrer manifest"))


def _read(st: RegistryStore, digest: str, subject: str) -> Descriptor | None:
    """The entry as the index's own bytes say (None: unreadable, or about another subject)."""
    try:
        raw, _, _ = st.fetch_manifest_raw(digest)
        if subject_digest_of(parse_json(raw, f"referrer index {digest}")) != subject:
            return None
        return referrer_descriptor(raw)
    except AcxError:
        return None


def typed_index_referrers(st: RegistryStore, refs: list[Descriptor], subject: str) -> list[Descriptor]:
    """``refs`` with each index entry listed without a type (go-containerregistry lists them bare) replaced by what
    its bytes say, so an ``artifactType`` filter and a client see its type and annotations."""
    bare = [d.digest for d in refs if d.media_type == MEDIA_INDEX and d.artifact_type is None][:INDEX_READS]
    if not bare:
        return refs
    with ThreadPoolExecutor(max_workers=4) as pool:
        read = dict(zip(bare, pool.map(lambda d: _read(st, d, subject), bare), strict=True))
    return [read.get(d.digest) or d for d in refs]


def annotated_referrers(st: RegistryStore, refs: list[Descriptor], subject: str) -> list[Descriptor]:
    """``refs`` as an upstream's Referrers API listed them, with each image manifest listed without annotations
    (go-containerregistry lists none) read for its own type and annotations, as the spec wants them listed; one
    that names another subject is dropped. Reads are bounded and remembered (:mod:`acx_oci.oci.classify`)."""
    bare = [d for d in refs if d.media_type == MEDIA_MANIFEST and not d.annotations]
    if not bare:
        return refs
    read = {d.digest: d for d in classify_referrers(st, subject, bare, every=True).descriptors}
    bare_digests = {d.digest for d in bare}
    return [read.get(d.digest, d) for d in refs if d.digest not in bare_digests or d.digest in read]
