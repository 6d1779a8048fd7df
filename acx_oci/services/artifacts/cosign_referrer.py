"""The level projection in cosign 3's own layout: a Sigstore bundle (v0.3) holding the DSSE envelope, pushed as
an OCI 1.1 referrer of the cartridge manifest, and taken down again when the level no longer stands.

Why this shape: it is byte-for-byte the layout ``cosign attest`` (3.1) writes by default (looked at on a
loopback registry: an image manifest with ``artifactType`` ``application/vnd.dev.sigstore.bundle.v0.3+json``,
the empty config, one bundle layer, a ``subject``; on a registry without the Referrers API, an entry in the
``sha256-<hex>`` tag-schema index), so ``cosign verify-attestation --key PEM --insecure-ignore-tlog`` finds
it with cosign 3's defaults. The bundle carries no certificate and no transparency-log entry, only a public
key hint: with ``--key`` that is what cosign's key path checks. Taking a level down deletes the referrer
manifest and drops it from the tag-schema index (both, because cosign reads whichever the registry has).
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import datetime

from acx_oci.crypto import Identity
from acx_oci.errors import AcxError, NotFoundError
from acx_oci.model import rfc3339
from acx_oci.oci import EMPTY_DIGEST, EMPTY_JSON, MEDIA_EMPTY, RegistryStore, Store, build_index, fallback_tag

MEDIA_BUNDLE = "application/vnd.dev.sigstore.bundle.v0.3+json"
MEDIA_OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MEDIA_OCI_INDEX = "application/vnd.oci.image.index.v1+json"
ANN_BUNDLE_CONTENT = "dev.sigstore.bundle.content"
ANN_BUNDLE_PREDICATE = "dev.sigstore.bundle.predicateType"
ANN_CREATED = "org.opencontainers.image.created"
_ED25519_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")  # DER SubjectPublicKeyInfo header of Ed25519


def key_hint(public_key: bytes) -> str:
    """cosign's ``publicKey.hint``: base64 of the SHA-256 of the key's DER SubjectPublicKeyInfo."""
    return base64.b64encode(hashlib.sha256(_ED25519_SPKI_PREFIX + public_key).digest()).decode("ascii")


def bundle_bytes(envelope: bytes, signer: Identity) -> bytes:
    """The Sigstore bundle v0.3 around a DSSE envelope: key-signed, no certificate, no log entry."""
    env = json.loads(envelope)
    dsse = {"payload": env["payload"], "payloadType": env["payloadType"],
            "signatures": [{"sig": s["sig"]} for s in env["signatures"]]}
    doc = {"mediaType": MEDIA_BUNDLE, "verificationMaterial": {"publicKey": {"hint": key_hint(signer.public_bytes)}},
           "dsseEnvelope": dsse}
    return json.dumps(doc, separators=(",", ":")).encode()


def push_bundle(store: Store, subject_digest: str, subject_size: int, subject_media_type: str, bundle: bytes,
                predicate_type: str, created: datetime) -> str:
    """Push ``bundle`` as cosign 3 does (the referrer manifest, listed in the fallback index where needed)."""
    store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    layer = store.push_blob(bundle, MEDIA_BUNDLE)
    manifest = {
        "schemaVersion": 2, "mediaType": MEDIA_OCI_MANIFEST,
        "config": {"mediaType": MEDIA_EMPTY, "size": len(EMPTY_JSON), "digest": EMPTY_DIGEST,
                   "artifactType": MEDIA_BUNDLE},
        "layers": [{"mediaType": MEDIA_BUNDLE, "size": layer.size, "digest": layer.digest}],
        "annotations": {ANN_BUNDLE_CONTENT: "dsse-envelope", ANN_BUNDLE_PREDICATE: predicate_type,
                        ANN_CREATED: rfc3339(created)},
        "subject": {"mediaType": subject_media_type, "size": subject_size, "digest": subject_digest},
        "artifactType": MEDIA_BUNDLE,
    }
    raw = json.dumps(manifest, separators=(",", ":")).encode()
    return store.push_referrer(raw, subject_digest).digest


def remove_bundle(store: Store, subject_digest: str, digest: str) -> str | None:
    """Take the referrer ``digest`` down: out of the tag-schema index, then deleted. None, or what failed.

    A store that is not a registry (an OCI layout) cannot delete: that is reported, not hidden.
    """
    if not isinstance(store, RegistryStore):
        return f"{store.reference}: cannot delete referrer {digest} from an OCI layout"
    try:
        try:
            entries = store.read_referrers_index(subject_digest)
        except NotFoundError:
            entries = []
        if any(d.digest == digest for d in entries):
            kept = [d for d in entries if d.digest != digest]
            store.put_manifest(build_index(kept), MEDIA_OCI_INDEX, fallback_tag(subject_digest))
        store.parsed_index = None
        resp = store.transport.request("DELETE", f"{store.base}manifests/{digest}")
        resp.close()
        if resp.status_code not in (200, 202, 204, 404):
            raise store.transport.fail(resp, f"DELETE manifest {digest}")
    except AcxError as exc:
        return f"{store.reference}: could not delete the cosign bundle {digest} ({exc})"
    return None

