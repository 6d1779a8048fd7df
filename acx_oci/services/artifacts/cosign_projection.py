"""A projection of our records for cosign (and Kyverno, Ratify): a level as a DSSE in-toto attestation, a
cartridge as a simple-signing signature.

Two layouts carry the level: cosign 3's Sigstore bundle as an OCI 1.1 referrer (services.artifacts.cosign_referrer) and
cosign 2.5's ``sha256-<hex>.att`` tag (here; ``.sig`` for the publisher's signature), which is what
``cosign verify[-attestation] --key K --insecure-ignore-tlog`` reads by default before 3.0 (pkg/oci/remote,
``signatures``/``attestations`` at ``<digest>.sig``/``.att``). The signing key is the verifier's (or the
publisher's) own Ed25519 key. The predicate says until when it stands (``validUntil``, no later than the
status list's next update) and which status-list entry decides; services.verifier.cosign_standing takes down what no
longer stands. This is a projection only: ``acx-oci`` still replays the game records.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any

from acx_oci.crypto import (
    PAYLOAD_TYPE_INTOTO,
    Identity,
    sha256_digest,
    sign_envelope,
    statement,
    statement_bytes,
    subject_for_digest,
)
from acx_oci.errors import UsageError
from acx_oci.model import LevelCredential, level_result, rfc3339
from acx_oci.oci import Descriptor, Store
from acx_oci.timeutil import parse_datetime

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


ACHIEVEMENT_PREFIX = "ACX Level — "


def capability_name(credential: LevelCredential) -> str | None:
    """The capability as people read it (``build-dag[...]@domain``), from the achievement's name."""
    subject = credential.get("credentialSubject")
    achievement = subject.get("achievement") if isinstance(subject, dict) else None
    name = achievement.get("name") if isinstance(achievement, dict) else credential.get("name")
    if not isinstance(name, str):
        return None
    return name[len(ACHIEVEMENT_PREFIX):] if name.startswith(ACHIEVEMENT_PREFIX) else name


def _until(credential: LevelCredential, list_valid_until: datetime) -> str:
    """``validUntil``: the status list's next update, or the credential's own end when that comes first."""
    own = credential.valid_until
    if isinstance(own, str):
        end = parse_datetime(own)
        if end is not None and end < list_valid_until:
            return own
    return rfc3339(list_valid_until)


def level_predicate(credential: LevelCredential, credential_digest: str,
                    list_valid_until: datetime | None = None) -> dict[str, Any]:
    """The level fields of a credential, flat, under the names the predicate type defines.

    ``capability`` is the readable name a policy compares (the content id is ``capabilityId``); ``status``
    is the credential's status-list entry, so a consumer that reads lists can check it too.
    """
    result = level_result(credential)
    if result is None:
        raise UsageError("cosign projection: the credential carries no acx level result")
    pred: dict[str, Any] = {
        "capability": capability_name(credential) or result.get("acx:capabilityId"),
        "capabilityId": result.get("acx:capabilityId"), "level": result.get("acx:acxLevel"),
        "tier": result.get("acx:careerTier"), "mu": result.get("acx:ratingMu"),
        "sigma": result.get("acx:ratingSigma"), "gamesPlayed": result.get("acx:gamesPlayed"),
        "benchmark": f"{result.get('acx:benchmarkId')}@{result.get('acx:benchmarkVersion')}",
        "benchmarkDigest": result.get("acx:benchmarkDigest"), "romDigest": result.get("acx:cartridgeRomDigest"),
        "credentialDigest": credential_digest, "credentialId": credential.get("id"),
        "issuer": credential.issuer, "issuedAt": credential.valid_from,
    }
    if list_valid_until is not None:
        pred["validUntil"] = _until(credential, list_valid_until)
    entries = credential.status_entries
    if entries:
        pred["status"] = {k: entries[0].get(k) for k in ("statusPurpose", "statusListIndex", "statusListCredential")}
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
                         signer: Identity, list_valid_until: datetime | None = None) -> bytes:
    """The DSSE envelope (JSON bytes) over the in-toto Statement of the credential's level."""
    credential = LevelCredential.read(credential_bytes, "cosign projection")  # (not an object: SchemaError)
    predicate = level_predicate(credential, sha256_digest(credential_bytes), list_valid_until)
    st = statement([subject_for_digest(name, cartridge_manifest_digest)], PREDICATE_LEVEL, predicate)
    envelope = sign_envelope(statement_bytes(st), PAYLOAD_TYPE_INTOTO, signer)
    return json.dumps(envelope, separators=(",", ":")).encode()


def push_attestation_envelope(store: Store, cartridge_manifest_digest: str, envelope: bytes) -> Descriptor:
    """Put ``envelope`` up as the only attestation cosign finds for the digest (tests push tampered ones)."""
    return push_attestation_envelopes(store, cartridge_manifest_digest, [envelope])


def push_attestation_envelopes(store: Store, cartridge_manifest_digest: str, envelopes: list[bytes]) -> Descriptor:
    """The ``.att`` tag with exactly ``envelopes`` (the levels of the cartridge that still stand).

    cosign checks every layer it finds there, so a level taken down must leave the tag; with none left the
    tag points at a manifest without layers, which cosign 2.5 answers with "no matching attestations"
    (overwriting a tag works on every registry, deleting does not).
    """
    layers = [store.push_blob(e, MEDIA_DSSE_ENVELOPE, {ANN_SIGNATURE: "", ANN_PREDICATE_TYPE: PREDICATE_LEVEL})
              for e in envelopes]
    return _push_layout(store, cartridge_manifest_digest, "att", layers)


def push_projection_layers(store: Store, cartridge_manifest_digest: str, layers: list[tuple[bytes, Descriptor]],
                           suffix: str = "att") -> Descriptor:
    """The ``.att`` (or ``.sig``) tag with exactly these layers, each its own bytes, media type and annotations
    (a copy that leaves the layers of levels no longer standing behind keeps the others' digests)."""
    pushed = [store.push_blob(raw, d.media_type, dict(d.annotations or {})) for raw, d in layers]
    return _push_layout(store, cartridge_manifest_digest, suffix, pushed)


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
