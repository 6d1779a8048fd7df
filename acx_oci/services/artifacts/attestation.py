"""Level attestations and status lists as OCI artifacts.

An attestation is an OCI 1.1 artifact whose ``subject`` is the cartridge
manifest: the credential is one layer (``application/vc``), the game records
are one more (:data:`MEDIA_GAME_RECORDS`: every DSSE envelope in one RFC 8785
document, each still signed and named by digest in the credential, so a
replay fetches one blob, not ninety), and annotations carry what a consumer
needs to filter without downloading blobs. Attestations pushed before that
carry one DSSE layer per record; both layouts are read (:func:`fetch_records`). A status list lives in the cartridge's
repository under ``acx-status-<uuid>``, the UUID being the last path segment
of its ``statusListCredential`` URL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import NotFoundError, UsageError
from acx_oci.jsonio import parse_json, validate
from acx_oci.model import LevelCredential, rom
from acx_oci.net import https
from acx_oci.oci import (
    ANNOTATION_CREATED,
    ANNOTATION_TITLE,
    ARTIFACT_ATTEMPT_RECORD,
    ARTIFACT_ATTESTATION,
    ARTIFACT_STATUS_LIST,
    EMPTY_JSON,
    MEDIA_ATTEMPT_RECORD,
    MEDIA_DSSE,
    MEDIA_EMPTY,
    MEDIA_MANIFEST,
    MEDIA_VC,
    Descriptor,
    Manifest,
    Store,
    build_manifest,
    referrer_tag,
)
from acx_oci.tlog import MEDIA_TYPE as MEDIA_LOG_PROOF
from acx_oci.urls import without_fragment

ANN_CAPABILITY = "dev.acx.capability.id"
ANN_TIER = "dev.acx.level.career-tier"
ANN_LEVEL = "dev.acx.level.acx-level"
ANN_ISSUER = "dev.acx.level.issuer"
ANN_BENCHMARK = "dev.acx.benchmark"
ANN_ROM = rom.ANN_ROM
ANN_STATUS_LIST = "dev.acx.status-list.id"
STATUS_TAG_PREFIX = "acx-status-"
MAX_CREDENTIAL_BYTES = 2 * 1024 * 1024
MAX_STATUS_LIST_BYTES = 4 * 1024 * 1024
_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")


def attestation_annotations(credential: LevelCredential) -> dict[str, str]:
    """Annotations summarising the credential, so a referrers listing can be filtered without fetching it."""
    res = credential.result
    return {
        ANN_CAPABILITY: str(res.get("acx:capabilityId", "")),
        ANN_TIER: str(res.get("acx:careerTier", "")),
        ANN_LEVEL: str(res.get("acx:acxLevel", "")),
        ANN_ISSUER: credential.issuer or "",
        ANN_BENCHMARK: f"{res.get('acx:benchmarkId', '')}@{res.get('acx:benchmarkVersion', '')}",
        ANN_ROM: str(res.get("acx:cartridgeRomDigest", "")),
        ANNOTATION_CREATED: str(credential.get("validFrom", "")),
    }


MEDIA_GAME_RECORDS = "application/vnd.acx.game-records.v1+json"
RECORDS_TYPE = "https://acx.dev/game-records/v1"
MAX_RECORDS_BYTES = 16 * 1024 * 1024


def records_document(envelopes: list[bytes]) -> bytes:
    """The one game-records layer: every envelope (its RFC 8785 bytes) in game order, as one RFC 8785 document.

    JCS is compositional, so each envelope inside is byte for byte the envelope its digest names.
    """
    docs = []
    for i, env in enumerate(envelopes, 1):
        doc = parse_json(env, f"game record {i}")
        if canonical(doc) != env:
            raise UsageError(f"game record {i}: not RFC 8785 bytes, so its digest would not survive the layer")
        docs.append(doc)
    return canonical({"type": RECORDS_TYPE, "records": docs})


def split_records(raw: bytes) -> dict[str, bytes]:
    """A game-records layer's envelopes by digest (their RFC 8785 bytes); SchemaError on a malformed document."""
    doc = parse_json(raw, "game records")
    validate(doc, "game-records.schema.json", "game records")
    out: dict[str, bytes] = {}
    for env in doc["records"]:
        b = canonical(env)
        out[sha256_digest(b)] = b
    return out


def records_layer(manifest: Manifest) -> Descriptor | None:
    """The attestation's game-records layer (the one-layer layout); None for the old layout or when ambiguous."""
    found = [layer for layer in manifest.layers if layer.media_type == MEDIA_GAME_RECORDS]
    return found[0] if len(found) == 1 else None


def fetch_records(store: Store, manifest: Manifest) -> dict[str, bytes]:
    """Every game record the attestation carries, by digest, in either layout (each fetch size-capped)."""
    bundle = records_layer(manifest)
    out = split_records(store.fetch_blob(bundle.digest, MAX_RECORDS_BYTES, size=bundle.size)) if bundle else {}
    for d in evidence_layers(manifest):
        out[d.digest] = store.fetch_blob(d.digest, MAX_CREDENTIAL_BYTES, size=d.size)
    return out


def push_attestation(store: Store, subject: Descriptor, credential_bytes: bytes,
                     envelopes: list[bytes], on_blob: Callable[[int, str], None] | None = None,
                     proof: bytes | None = None) -> Descriptor:
    """Push credential + game records (+ the log proof) as a referrer of ``subject`` (with its own tag)."""
    raw, _ = build_attestation(store, subject, credential_bytes, envelopes, on_blob, proof)
    return store.push_referrer(raw, subject.digest, referrer_tag(sha256_digest(raw), subject.digest))


def build_attestation(store: Store, subject: Descriptor, credential_bytes: bytes, envelopes: list[bytes],
                      on_blob: Callable[[int, str], None] | None = None,
                      proof: bytes | None = None) -> tuple[bytes, Descriptor]:
    """Upload the layers (the credential, the game records as one document, the log proof) and return the
    manifest bytes (not yet pushed).

    ``on_blob(done, title)`` after each layer.
    """
    credential = LevelCredential.read(credential_bytes, "credential")  # (not an object: a SchemaError)
    store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    layers = [store.push_blob(credential_bytes, MEDIA_VC, {ANNOTATION_TITLE: "credential.json"})]
    if on_blob:
        on_blob(1, "credential.json")
    if envelopes:
        title = "game-records.json"
        layers.append(store.push_blob(records_document(envelopes), MEDIA_GAME_RECORDS, {ANNOTATION_TITLE: title}))
        if on_blob:
            on_blob(2, title)
    layers += proof_layers(store, proof)
    subj = Descriptor(subject.media_type or MEDIA_MANIFEST, subject.digest, subject.size)
    annotations = attestation_annotations(credential)
    raw = build_manifest(ARTIFACT_ATTESTATION, layers, subject=subj, annotations=annotations)
    return raw, Descriptor(MEDIA_MANIFEST, sha256_digest(raw), len(raw), annotations, ARTIFACT_ATTESTATION)


def proof_layers(store: Store, proof: bytes | None) -> list[Descriptor]:
    """The log proof (``tlog.proof``) as one extra layer; none for a run that was not logged ("not logged")."""
    if proof is None:
        return []
    return [store.push_blob(proof, MEDIA_LOG_PROOF, {ANNOTATION_TITLE: "log-proof.json"})]


def push_attempt_record(store: Store, subject: Descriptor, record: bytes, proof: bytes | None = None) -> Descriptor:
    """Push a signed attempt record (its RFC 8785 bytes) as a referrer of ``subject``: the same record always
    makes the same manifest, so pushing it again is a no-op."""
    doc = parse_json(record, "attempt record")
    if not isinstance(doc, dict):
        raise UsageError("attempt record: expected a JSON object")
    store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    layer = store.push_blob(record, MEDIA_ATTEMPT_RECORD, {ANNOTATION_TITLE: "attempt-record.json"})
    subj = Descriptor(subject.media_type or MEDIA_MANIFEST, subject.digest, subject.size)
    annotations = {ANN_ISSUER: str(doc.get("issuer", "")), ANN_CAPABILITY: str(doc.get("capability", "")),
                   ANN_BENCHMARK: str(doc.get("benchmark", "")), ANN_ROM: str(doc.get("romDigest", "")),
                   ANNOTATION_CREATED: str(doc.get("validFrom", ""))}
    raw = build_manifest(ARTIFACT_ATTEMPT_RECORD, [layer, *proof_layers(store, proof)], subject=subj,
                         annotations=annotations)
    return store.push_referrer(raw, subject.digest, referrer_tag(sha256_digest(raw), subject.digest))


def credential_layer(manifest: Manifest) -> Descriptor | None:
    """The attestation's single VC layer; None when it has no VC layer or more than one (ambiguous)."""
    vcs = [layer for layer in manifest.layers if layer.media_type == MEDIA_VC]
    return vcs[0] if len(vcs) == 1 else None


def evidence_layers(manifest: Manifest) -> list[Descriptor]:
    """The attestation's DSSE game-record layers, in manifest order (the old layout, one layer per record)."""
    return [layer for layer in manifest.layers if layer.media_type == MEDIA_DSSE]


# ---------------------------------------------------------------- status lists

def status_tag(list_url: str) -> str:
    """``acx-status-<uuid>`` for a list URL whose last path segment is a UUID."""
    last = without_fragment(list_url.rstrip("/").rsplit("/", 1)[-1])
    if not _UUID_RE.match(last):
        raise UsageError(f"status list URL {list_url!r}: expected a UUID as its last path segment")
    return STATUS_TAG_PREFIX + last.lower()


def names_status_tag(tag: str, url: str) -> bool:
    """Whether a credential's ``statusListCredential`` URL is published under ``tag`` (a URL with no UUID: never)."""
    try:
        return status_tag(url) == tag
    except UsageError:
        return False


def publish_status_list(store: Store, status_list: dict[str, Any]) -> Descriptor:
    """Push the signed list under its ``acx-status-<uuid>`` tag (replacing the previous one)."""
    list_url = str(status_list.get("id"))
    tag = status_tag(list_url)
    data = json.dumps(status_list, sort_keys=True, separators=(",", ":")).encode("utf-8")
    store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    layer = store.push_blob(data, MEDIA_VC, {ANNOTATION_TITLE: "status-list.json"})
    raw = build_manifest(ARTIFACT_STATUS_LIST, [layer],
                         annotations={ANN_STATUS_LIST: list_url, ANNOTATION_CREATED: str(status_list.get("validFrom"))})
    return store.push_manifest(raw, MEDIA_MANIFEST, tag)


def fetch_status_list(store: Store, list_url: str) -> tuple[dict[str, Any], str] | None:
    """The list published for ``list_url`` in this repository and its manifest digest, or None."""
    try:
        tag = status_tag(list_url)
    except UsageError:
        return None
    try:
        manifest = store.fetch_manifest(tag)
    except NotFoundError:
        return None
    if manifest.artifact_type != ARTIFACT_STATUS_LIST:
        raise UsageError(f"{tag}: expected artifactType {ARTIFACT_STATUS_LIST}, found {manifest.artifact_type}")
    layer = credential_layer(manifest)
    if layer is None:
        raise UsageError(f"{tag}: expected one {MEDIA_VC} layer")
    doc = parse_json(store.fetch_blob(layer.digest, MAX_STATUS_LIST_BYTES, size=layer.size), f"status list {tag}")
    if not isinstance(doc, dict):
        raise UsageError(f"status list {tag}: expected a JSON object")
    return doc, manifest.digest


def fetch_status_list_https(url: str) -> dict[str, Any] | None:
    """GET a status list over HTTPS (only when the user allows the network); size-capped; None if absent."""
    if not https.allowed(url):
        return None
    try:
        data = https.fetch(url, max_bytes=MAX_STATUS_LIST_BYTES, accept="application/vc+ld+json, application/json")
    except NotFoundError:
        return None
    doc = parse_json(data, f"status list {url}")
    return doc if isinstance(doc, dict) else None
