"""OCI media types, descriptors and manifest bytes (pure).

Manifests are built once as exact bytes; their digest is computed over those
bytes and they are never re-serialized afterwards.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from acx_oci.crypto import check_digest, sha256_digest
from acx_oci.errors import UsageError
from acx_oci.jsonio import loads_ijson, parse_json

MEDIA_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MEDIA_INDEX = "application/vnd.oci.image.index.v1+json"
MEDIA_DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
MEDIA_DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
MANIFEST_ACCEPT = ", ".join([MEDIA_MANIFEST, MEDIA_INDEX, MEDIA_DOCKER_MANIFEST, MEDIA_DOCKER_LIST])
MEDIA_EMPTY = "application/vnd.oci.empty.v1+json"
EMPTY_JSON = b"{}"
EMPTY_DIGEST = sha256_digest(EMPTY_JSON)

ARTIFACT_CARTRIDGE = "application/vnd.acx.cartridge.v1"
ARTIFACT_BENCHMARK = "application/vnd.acx.benchmark.v1"
ARTIFACT_ATTESTATION = "application/vnd.acx.level-attestation.v1"
ARTIFACT_ATTEMPT_RECORD = "application/vnd.acx.attempt-record.v1"
MEDIA_ATTEMPT_RECORD = "application/vnd.acx.attempt-record.v1+json"
ARTIFACT_STATUS_LIST = "application/vnd.acx.status-list.v1"

MEDIA_DSSE = "application/vnd.dsse.envelope.v1+json"
MEDIA_VC = "application/vc"

ANNOTATION_TITLE = "org.opencontainers.image.title"
ANNOTATION_CREATED = "org.opencontainers.image.created"

MAX_MANIFEST_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Descriptor:
    """An OCI content descriptor; ``annotations`` and ``artifact_type`` are optional."""

    media_type: str
    digest: str
    size: int
    annotations: dict[str, str] = field(default_factory=dict)
    artifact_type: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The descriptor as OCI JSON, optional fields left out when empty."""
        out: dict[str, Any] = {"mediaType": self.media_type, "digest": self.digest, "size": self.size}
        if self.artifact_type:
            out["artifactType"] = self.artifact_type
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        return out

    @classmethod
    def from_json(cls, obj: Any, what: str = "descriptor") -> Descriptor:
        """Parse a descriptor from untrusted JSON; UsageError naming ``what`` for a missing field or a bad digest."""
        if not isinstance(obj, dict):
            raise UsageError(f"{what}: expected an object, found {type(obj).__name__}")
        mt, dg, size = obj.get("mediaType"), obj.get("digest"), obj.get("size")
        if not isinstance(mt, str) or not isinstance(dg, str) or not isinstance(size, int) or size < 0:
            raise UsageError(f"{what}: expected mediaType, digest and size")
        check_digest(dg, f"{what} digest")
        ann = obj.get("annotations") or {}
        if not isinstance(ann, dict) or not all(isinstance(v, str) for v in ann.values()):
            raise UsageError(f"{what}: annotations must map strings to strings")
        at = obj.get("artifactType")
        return cls(mt, dg, size, dict(ann), at if isinstance(at, str) else None)

    @classmethod
    def for_bytes(cls, media_type: str, data: bytes, annotations: dict[str, str] | None = None) -> Descriptor:
        """The descriptor of exact bytes: what a push returns and a manifest lists."""
        return cls(media_type, sha256_digest(data), len(data), dict(annotations or {}))


EMPTY_DESCRIPTOR = Descriptor(MEDIA_EMPTY, EMPTY_DIGEST, len(EMPTY_JSON))


def dump(obj: Any) -> bytes:
    """Stable compact JSON bytes for documents we author (sorted keys)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def build_manifest(
    artifact_type: str,
    layers: list[Descriptor],
    *,
    subject: Descriptor | None = None,
    annotations: dict[str, str] | None = None,
    config: Descriptor = EMPTY_DESCRIPTOR,
) -> bytes:
    """Return the exact bytes of an OCI 1.1 artifact image manifest."""
    doc: dict[str, Any] = {
        "schemaVersion": 2,
        "mediaType": MEDIA_MANIFEST,
        "artifactType": artifact_type,
        "config": config.to_json(),
        "layers": [layer.to_json() for layer in layers],
    }
    if subject is not None:
        doc["subject"] = subject.to_json()
    if annotations:
        doc["annotations"] = dict(annotations)
    raw = dump(doc)
    check_manifest_size(raw, "manifest")
    return raw


def check_manifest_size(raw: bytes, what: str) -> None:
    """The one 4 MiB manifest limit (registries refuse more; we refuse it on push and on read)."""
    if len(raw) > MAX_MANIFEST_BYTES:
        raise UsageError(f"{what}: {len(raw)} bytes, over {MAX_MANIFEST_BYTES} bytes (the manifest limit)")


def build_index(manifests: list[Descriptor], annotations: dict[str, str] | None = None) -> bytes:
    """The exact bytes of an OCI image index over ``manifests``."""
    doc: dict[str, Any] = {
        "schemaVersion": 2,
        "mediaType": MEDIA_INDEX,
        "manifests": [m.to_json() for m in manifests],
    }
    if annotations:
        doc["annotations"] = dict(annotations)
    return dump(doc)


@dataclass(frozen=True)
class Manifest:
    """A parsed image manifest together with the exact bytes it came from."""

    raw: bytes
    digest: str
    media_type: str
    artifact_type: str | None
    config: Descriptor
    layers: tuple[Descriptor, ...]
    subject: Descriptor | None
    annotations: dict[str, str]

    @property
    def descriptor(self) -> Descriptor:
        """The descriptor that lists this manifest in an index or a referrers listing (annotations and artifact type
        kept)."""
        return Descriptor(self.media_type, self.digest, len(self.raw), dict(self.annotations), self.artifact_type)


def _manifest_json(raw: bytes, what: str) -> dict[str, Any]:
    """Size-capped JSON object from manifest or index bytes."""
    check_manifest_size(raw, what)
    doc = parse_json(raw, what)
    if not isinstance(doc, dict):
        raise UsageError(f"{what}: expected a JSON object")
    return doc


def media_type_of(raw: bytes, default: str) -> str:
    """The ``mediaType`` a manifest declares about itself, else ``default`` (e.g. Content-Type)."""
    try:
        doc = loads_ijson(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return default
    mt = doc.get("mediaType") if isinstance(doc, dict) else None
    return mt if isinstance(mt, str) else default


def parse_manifest(raw: bytes, what: str = "manifest") -> Manifest:
    """Parse an OCI image manifest; refuse oversize, non-JSON and wrong media types."""
    doc = _manifest_json(raw, what)
    mt = doc.get("mediaType", MEDIA_MANIFEST)
    if mt != MEDIA_MANIFEST:
        raise UsageError(f"{what}: expected mediaType {MEDIA_MANIFEST}, found {mt}")
    layers = doc.get("layers")
    if not isinstance(layers, list):
        raise UsageError(f"{what}: expected a layers array")
    config = Descriptor.from_json(doc.get("config"), f"{what} config")
    at = doc.get("artifactType")
    if not isinstance(at, str):
        at = config.media_type if config.media_type != MEDIA_EMPTY else None
    subj = doc.get("subject")
    ann = doc.get("annotations") or {}
    if not isinstance(ann, dict):
        raise UsageError(f"{what}: annotations must be an object")
    return Manifest(
        raw=raw,
        digest=sha256_digest(raw),
        media_type=mt,
        artifact_type=at,
        config=config,
        layers=tuple(Descriptor.from_json(x, f"{what} layer") for x in layers),
        subject=Descriptor.from_json(subj, f"{what} subject") if subj is not None else None,
        annotations={str(k): str(v) for k, v in ann.items()},
    )


def parse_index(raw: bytes, what: str = "index") -> list[Descriptor]:
    """Entries of an OCI image index from untrusted bytes; UsageError for any other media type or shape."""
    doc = _manifest_json(raw, what)
    if doc.get("mediaType", MEDIA_INDEX) != MEDIA_INDEX:
        raise UsageError(f"{what}: expected an OCI image index")
    ms = doc.get("manifests")
    if not isinstance(ms, list):
        raise UsageError(f"{what}: expected a manifests array")
    return [Descriptor.from_json(m, f"{what} entry") for m in ms]
