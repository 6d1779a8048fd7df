"""A projection of our records for cosign (and Kyverno, Ratify): a level as a DSSE in-toto attestation, a
cartridge as a simple-signing signature, both in cosign's tag layout.

Why the ``sha256-<hex>.att`` / ``.sig`` tags and not OCI 1.1 referrers with Sigstore bundles: cosign 2.5
reads bundles from referrers only behind ``--new-bundle-format``/``--experimental-oci11``, and a bundle
without a transparency-log entry or certificate is not what its key-based path checks; the legacy tags are
what ``cosign verify[-attestation] --key K --insecure-ignore-tlog`` reads by default (pkg/oci/remote,
``signatures``/``attestations`` at ``<digest>.sig``/``.att``). The signing key is the verifier's (or the
publisher's) own Ed25519 key. This is a projection only: ``acx-oci`` still replays the game records.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from acx_oci.crypto.digest import sha256_digest
from acx_oci.crypto.dsse import PAYLOAD_TYPE_INTOTO, sign_envelope
from acx_oci.crypto.intoto import statement, statement_bytes, subject_for_digest
from acx_oci.crypto.keys import Identity
from acx_oci.errors import UsageError
from acx_oci.jsonio import parse_json
from acx_oci.model.credential import level_result
from acx_oci.oci.model import Descriptor
from acx_oci.oci.store import Store

PREDICATE_LEVEL = "https://acx.dev/attestation/level/v1"
MEDIA_DSSE_ENVELOPE = "application/vnd.dsse.envelope.v1+json"
MEDIA_SIMPLESIGNING = "application/vnd.dev.cosign.simplesigning.v1+json"
MEDIA_OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MEDIA_OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
ANN_SIGNATURE = "dev.cosignproject.cosign/signature"
ANN_PREDICATE_TYPE = "predicateType"


def cosign_tag(digest: str, suffix: str) -> str:
    """cosign's tag for a digest's signatures (``sig``) or attestations (``att``): ``sha256-<hex>.<suffix>``."""
    alg, _, hexpart = digest.partition(":")
    return f"{alg}-{hexpart}.{suffix}"


def level_predicate(credential: dict[str, Any], credential_digest: str) -> dict[str, Any]:
    """The level fields of a credential, flat, under the names the predicate type defines."""
    result = level_result(credential)
    if result is None:
        raise UsageError("cosign projection: the credential carries no acx level result")
    pred: dict[str, Any] = {
        "capability": result.get("acx:capabilityId"), "level": result.get("acx:acxLevel"),
        "tier": result.get("acx:careerTier"), "mu": result.get("acx:ratingMu"),
        "sigma": result.get("acx:ratingSigma"), "gamesPlayed": result.get("acx:gamesPlayed"),
        "benchmark": f"{result.get('acx:benchmarkId')}@{result.get('acx:benchmarkVersion')}",
        "benchmarkDigest": result.get("acx:benchmarkDigest"), "romDigest": result.get("acx:cartridgeRomDigest"),
        "credentialDigest": credential_digest,
    }
    model = result.get("acx:model")
    if model is not None:
        pred["model"] = model
    return pred


def _config(layers: list[Descriptor]) -> bytes:
    """The image config cosign (go-containerregistry's empty image) writes: diff ids are the layer digests."""
    cfg = {"architecture": "", "created": "0001-01-01T00:00:00Z", "history": [{"created": "0001-01-01T00:00:00Z"}],
           "os": "", "rootfs": {"type": "layers", "diff_ids": [d.digest for d in layers]}, "config": {}}
    return json.dumps(cfg, separators=(",", ":")).encode()


def _push_layout(store: Store, subject_digest: str, suffix: str, layers: list[Descriptor]) -> Descriptor:
    """Push the manifest cosign reads at ``sha256-<hex>.<suffix>`` (it replaces any earlier one)."""
    cfg_bytes = _config(layers)
    cfg = store.push_blob(cfg_bytes, MEDIA_OCI_CONFIG)
    manifest = {
        "schemaVersion": 2, "mediaType": MEDIA_OCI_MANIFEST,
        "config": {"mediaType": MEDIA_OCI_CONFIG, "size": cfg.size, "digest": cfg.digest},
        "layers": [{"mediaType": d.media_type, "size": d.size, "digest": d.digest,
                    "annotations": dict(d.annotations or {})} for d in layers],
    }
    raw = json.dumps(manifest, separators=(",", ":")).encode()
    return store.push_manifest(raw, MEDIA_OCI_MANIFEST, cosign_tag(subject_digest, suffix))


def attestation_envelope(cartridge_manifest_digest: str, name: str, credential_bytes: bytes,
                         signer: Identity) -> bytes:
    """The DSSE envelope (JSON bytes) over the in-toto Statement of the credential's level."""
    credential = parse_json(credential_bytes, "credential")
    if not isinstance(credential, dict):
        raise UsageError("cosign projection: the credential is not a JSON object")
    predicate = level_predicate(credential, sha256_digest(credential_bytes))
    st = statement([subject_for_digest(name, cartridge_manifest_digest)], PREDICATE_LEVEL, predicate)
    envelope = sign_envelope(statement_bytes(st), PAYLOAD_TYPE_INTOTO, signer)
    return json.dumps(envelope, separators=(",", ":")).encode()


def push_attestation_envelope(store: Store, cartridge_manifest_digest: str, envelope: bytes) -> Descriptor:
    """Put ``envelope`` up as the only attestation cosign finds for the digest (tests push tampered ones)."""
    layer = store.push_blob(envelope, MEDIA_DSSE_ENVELOPE, {ANN_SIGNATURE: "", ANN_PREDICATE_TYPE: PREDICATE_LEVEL})
    return _push_layout(store, cartridge_manifest_digest, "att", [layer])


def publish_projection(store: Store, cartridge_manifest_digest: str, credential: bytes,
                       verifier_identity: Identity) -> Descriptor:
    """Publish the credential's level as a cosign attestation of the cartridge, signed by the verifier.

    One attestation per cartridge: the newest publication replaces the tag (cosign checks every layer of
    it, and an older level of the same cartridge is superseded by the status list anyway).
    """
    name = store.reference.repository
    envelope = attestation_envelope(cartridge_manifest_digest, name, credential, verifier_identity)
    return push_attestation_envelope(store, cartridge_manifest_digest, envelope)


def simple_signing_payload(docker_reference: str, manifest_digest: str) -> bytes:
    """cosign's "container image signature" payload for one manifest digest."""
    doc = {"critical": {"identity": {"docker-reference": docker_reference},
                        "image": {"docker-manifest-digest": manifest_digest},
                        "type": "cosign container image signature"}, "optional": None}
    return json.dumps(doc, separators=(",", ":")).encode()


def sign_manifest(store: Store, manifest_digest: str, signer: Identity) -> Descriptor:
    """The publisher's cosign signature of the cartridge manifest (``cosign verify --key publisher.pub``)."""
    ref = store.reference
    where = f"{ref.host}/{ref.repository}" if ref.host else (ref.repository or ref.path)
    payload = simple_signing_payload(where, manifest_digest)
    sig = base64.b64encode(signer.sign(payload)).decode("ascii")
    layer = store.push_blob(payload, MEDIA_SIMPLESIGNING, {ANN_SIGNATURE: sig})
    return _push_layout(store, manifest_digest, "sig", [layer])
