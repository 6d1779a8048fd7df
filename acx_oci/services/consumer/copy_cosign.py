"""What ``acx-oci copy`` carries of the cosign projection: the publisher's ``.sig`` tag, and of the level
projections (cosign 2.5's ``.att`` tag, cosign 3's Sigstore bundle referrers) only those of levels that stand.

Why judged here: cosign reads no status list, so a mirror that carried the projection of a revoked or
superseded level would let ``cosign verify-attestation`` pass on the mirror long after the verifier took it
down at the source. The rule is the verifier's (services.verifier.cosign_standing: not revoked, not
superseded, not expired), read where a consumer can read it: the copy's ``--trust`` resolution of the
source. A level projection is carried only when its predicate's ``credentialDigest`` is the credential a
VERIFIED claim rests on; without ``--trust`` nothing can be judged, so none is carried (fail closed). What
is carried keeps its exact bytes. At the destination, a projection of a level that does not stand is taken
down as the verifier would: the bundle referrer deleted, the ``.att`` tag rewritten without its layer.
"""

from __future__ import annotations

import base64
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from acx_oci import reasons
from acx_oci.errors import AcxError, NotFoundError
from acx_oci.model.resolution import VERIFIED, Resolution
from acx_oci.oci.model import Descriptor, Manifest
from acx_oci.oci.store import Store
from acx_oci.oci.transfer import CopyPlan, PlannedManifest, plan_tree
from acx_oci.services.artifacts.cosign_projection import (
    ANN_PREDICATE_TYPE,
    MEDIA_DSSE_ENVELOPE,
    PREDICATE_LEVEL,
    cosign_tag,
    push_attestation_layers,
)
from acx_oci.services.artifacts.cosign_referrer import ANN_BUNDLE_PREDICATE, MEDIA_BUNDLE, remove_bundle

MAX_PROJECTION_BYTES = 1 << 20  # one envelope or bundle: a credential's level fields, signed


def standing_credentials(resolution: Resolution | None) -> frozenset[str] | None:
    """The credential digests VERIFIED claims rest on; None without a resolution (nothing can be judged)."""
    if resolution is None:
        return None
    return frozenset(c.best.credential_digest for c in resolution.capabilities
                     if c.effective == VERIFIED and c.best is not None)


def _level_credential(envelope: Any) -> tuple[bool, str | None]:
    """(is a level projection, the credential digest its predicate names) of a DSSE envelope object."""
    try:
        statement = json.loads(base64.b64decode(envelope["payload"], validate=True))
        if statement.get("predicateType") != PREDICATE_LEVEL:
            return False, None
        digest = statement["predicate"].get("credentialDigest")
        return True, digest if isinstance(digest, str) else None
    except (KeyError, TypeError, ValueError, AttributeError):
        return False, None


def _projected(raw: bytes, bundle: bool, declared_level: bool) -> tuple[bool, str | None]:
    """A layer's (is a level projection, credential digest); one declared a level but unreadable is a level
    projection that names nothing, so it never stands."""
    try:
        doc = json.loads(raw)
        is_level, digest = _level_credential(doc.get("dsseEnvelope") if bundle else doc)
    except (ValueError, AttributeError):
        is_level, digest = False, None
    return (is_level or declared_level), digest


def _bundle_stands(carry: CosignCarry, store: Store, manifest: Manifest) -> bool:
    """A bundle referrer that is not a level projection stands; a level one, when its level does."""
    if len(manifest.layers) != 1:
        return True
    declared = (manifest.annotations or {}).get(ANN_BUNDLE_PREDICATE) == PREDICATE_LEVEL
    is_level, cred = _projected(store.fetch_blob(manifest.layers[0].digest, MAX_PROJECTION_BYTES), True, declared)
    return not is_level or carry.stands(cred)


@dataclass
class CosignCarry:
    """The copy's decisions on one subject's cosign projection (planned with the rest, finished after)."""

    subject: str
    standing: frozenset[str] | None
    att_layers: list[tuple[bytes, Descriptor]] | None = None  # the source .att's standing layers, to rewrite
    carried_bundles: set[str] = field(default_factory=set)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def stands(self, digest: str | None) -> bool:
        """Whether the level of this credential digest stands (never, when nothing could be judged)."""
        return self.standing is not None and digest is not None and digest in self.standing

    def _skip(self, digest: str, artifact_type: str, why: str) -> None:
        self.skipped.append({"digest": digest, "artifactType": artifact_type, "code": reasons.PROJECTION_NOT_STANDING,
                             "reason": why, "listedArtifactType": None})

    def _why(self) -> str:
        if self.standing is None:
            return "a cosign projection of a level: without --trust the copy cannot tell whether the level stands"
        return ("a cosign projection of a level that does not stand (revoked, superseded, expired or not "
                "verified under --trust): cosign would accept what acx-oci refuses")

    def bundle_carried(self, src: Store, item: PlannedManifest) -> bool:
        """Whether a Sigstore bundle referrer of the subject goes along (one that is not a level: always)."""
        if item.manifest is None or _bundle_stands(self, src, item.manifest):
            self.carried_bundles.add(item.digest)
            return True
        self._skip(item.digest, MEDIA_BUNDLE, self._why())
        return False

    def plan_tags(self, src: Store, plan: CopyPlan) -> None:
        """``.sig`` exactly; ``.att`` exactly when every level layer stands, else only its standing layers."""
        sig = cosign_tag(self.subject, "sig")
        with contextlib.suppress(NotFoundError):  # a cartridge pushed without a signature has none
            plan_tree(src, sig, plan, sig)
        att = cosign_tag(self.subject, "att")
        try:
            manifest = src.fetch_manifest(att)
        except NotFoundError:
            return
        kept: list[tuple[bytes, Descriptor]] = []
        for layer in manifest.layers:
            raw = src.fetch_blob(layer.digest, MAX_PROJECTION_BYTES)
            declared = (layer.annotations or {}).get(ANN_PREDICATE_TYPE) == PREDICATE_LEVEL
            is_level, cred = _projected(raw, False, declared and layer.media_type == MEDIA_DSSE_ENVELOPE)
            if is_level and not self.stands(cred):
                self._skip(layer.digest, MEDIA_DSSE_ENVELOPE, f"{self._why()} (a layer of the {att} tag)")
            else:
                kept.append((raw, layer))
        if len(kept) == len(manifest.layers):
            plan_tree(src, att, plan, att)
        else:
            self.att_layers = kept

    def finish(self, dst: Store) -> None:
        """After the push: the ``.att`` tag rewritten where needed, and the destination's projections of
        levels that do not stand taken down (only when they can be judged: with ``--trust``)."""
        if self.att_layers is not None:
            push_attestation_layers(dst, self.subject, self.att_layers)
        if self.standing is None:
            return
        if self.att_layers is None:
            self._filter_destination_att(dst)
        for desc in dst.referrers(self.subject, MEDIA_BUNDLE).descriptors:
            if desc.digest in self.carried_bundles:
                continue
            try:
                stands = _bundle_stands(self, dst, dst.fetch_manifest(desc.digest))
            except AcxError as exc:
                self.notes.append(f"destination bundle {desc.digest} could not be read ({exc}): left as it is")
                continue
            if not stands:
                err = remove_bundle(dst, self.subject, desc.digest)
                self.notes.append(err or f"destination bundle {desc.digest}: a level that does not stand, taken down")

    def _filter_destination_att(self, dst: Store) -> None:
        att = cosign_tag(self.subject, "att")
        try:
            manifest = dst.fetch_manifest(att)
        except NotFoundError:
            return
        kept: list[tuple[bytes, Descriptor]] = []
        for layer in manifest.layers:
            raw = dst.fetch_blob(layer.digest, MAX_PROJECTION_BYTES)
            declared = (layer.annotations or {}).get(ANN_PREDICATE_TYPE) == PREDICATE_LEVEL
            is_level, cred = _projected(raw, False, declared and layer.media_type == MEDIA_DSSE_ENVELOPE)
            if not is_level or self.stands(cred):
                kept.append((raw, layer))
        if len(kept) != len(manifest.layers):
            push_attestation_layers(dst, self.subject, kept)
            self.notes.append(f"destination {att}: {len(manifest.layers) - len(kept)} layer(s) of levels that do "
                              "not stand taken down")


__all__ = ["CosignCarry", "standing_credentials"]
