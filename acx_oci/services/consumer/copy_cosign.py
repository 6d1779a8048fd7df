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

from dataclasses import dataclass, field
from typing import Any

from acx_oci import reasons
from acx_oci.errors import AcxError, NotFoundError
from acx_oci.model import VERIFIED, Resolution
from acx_oci.oci import CopyPlan, Descriptor, Manifest, PlannedManifest, Store, plan_tree
from acx_oci.services.artifacts import (
    ANN_BUNDLE_PREDICATE,
    ANN_PREDICATE_TYPE,
    MEDIA_BUNDLE,
    PREDICATE_LEVEL,
    cosign_tag,
    push_projection_layers,
    remove_bundle,
)
from acx_oci.services.consumer import cosign_read

MAX_PROJECTION_BYTES = 1 << 20  # one envelope or bundle: a credential's level fields, signed
#: What cosign 3 takes as a bundle layer (``application/vnd.dev.sigstore.bundle.v0.3+json`` and its kin).
BUNDLE_LAYER_PREFIX = "application/vnd.dev.sigstore.bundle"


def standing_credentials(resolution: Resolution | None) -> frozenset[str] | None:
    """The credential digests VERIFIED claims rest on; None without a resolution (nothing can be judged)."""
    if resolution is None:
        return None
    return frozenset(c.best.credential_digest for c in resolution.capabilities
                     if c.effective == VERIFIED and c.best is not None)


def _projected(raw: bytes, bundle: bool, declared_level: bool) -> tuple[bool, str | None]:
    """A layer's (is a level projection, credential digest), read as cosign reads it (:mod:`cosign_read`).
    One declared a level by its annotation, or that cannot be read at all, is a level projection that names
    nothing, so it never stands (fail closed: what we cannot read, we cannot vouch that cosign cannot)."""
    try:
        is_level, digest = cosign_read.level_of(raw, bundle)
    except ValueError:
        return True, None
    return (is_level or declared_level), digest


def looks_like_bundle(manifest: Manifest | None) -> bool:
    """Whether cosign 3 could read the manifest as a Sigstore bundle, whatever its ``artifactType`` says: it lists
    every referrer and takes a layer whose media type starts with :data:`BUNDLE_LAYER_PREFIX` (a bundle put back
    under another type, or none, verified on a mirror that judged only the declared ones)."""
    return manifest is not None and any(layer.media_type.startswith(BUNDLE_LAYER_PREFIX) for layer in manifest.layers)


def _bundle_stands(carry: CosignCarry, store: Store, manifest: Manifest) -> bool:
    """A bundle referrer stands when each of its bundle layers does: one that is not a level, or a level that
    stands (every such layer is judged: cosign need not read the one a count of one would have pointed at)."""
    declared = (manifest.annotations or {}).get(ANN_BUNDLE_PREDICATE) == PREDICATE_LEVEL
    for layer in manifest.layers:
        if not layer.media_type.startswith(BUNDLE_LAYER_PREFIX) and len(manifest.layers) > 1:
            continue
        is_level, cred = _projected(store.fetch_blob(layer.digest, MAX_PROJECTION_BYTES, layer.size), True,
                                    declared)
        if is_level and not carry.stands(cred):
            return False
    return True


@dataclass
class CosignCarry:
    """The copy's decisions on one subject's cosign projection (planned with the rest, finished after)."""

    subject: str
    standing: frozenset[str] | None
    rewritten: dict[str, list[tuple[bytes, Descriptor]]] = field(default_factory=dict)  # suffix -> kept
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
        """``.sig`` and ``.att`` exactly when every level layer in them stands, else only their standing layers."""
        for suffix in ("sig", "att"):
            tag = cosign_tag(self.subject, suffix)
            try:  # a cartridge pushed without a signature has no .sig; one never attested no .att
                manifest = src.fetch_manifest(tag)
            except NotFoundError:
                continue
            kept = self._standing_layers(src, manifest, tag)
            if len(kept) == len(manifest.layers):
                plan_tree(src, tag, plan, tag)
            else:
                self.rewritten[suffix] = kept

    def _standing_layers(self, store: Store, manifest: Manifest, tag: str | None) -> list[tuple[bytes, Descriptor]]:
        """The layers of a ``.sig``/``.att`` manifest that carry no level, or one that stands; each other one is
        named as skipped when ``tag`` (the source's) is given."""
        kept: list[tuple[bytes, Descriptor]] = []
        for layer in manifest.layers:
            raw = store.fetch_blob(layer.digest, MAX_PROJECTION_BYTES, layer.size)
            declared = (layer.annotations or {}).get(ANN_PREDICATE_TYPE) == PREDICATE_LEVEL
            is_level, cred = _projected(raw, False, declared)
            if is_level and not self.stands(cred):
                if tag is not None:
                    self._skip(layer.digest, layer.media_type, f"{self._why()} (a layer of the {tag} tag)")
            else:
                kept.append((raw, layer))
        return kept

    def finish(self, dst: Store) -> None:
        """After the push: the ``.sig``/``.att`` tags rewritten where needed, and the destination's projections
        of levels that do not stand taken down (only when they can be judged: with ``--trust``)."""
        for suffix, kept in self.rewritten.items():
            push_projection_layers(dst, self.subject, kept, suffix)
        if self.standing is None:
            return
        for suffix in ("sig", "att"):
            if suffix not in self.rewritten:
                self._filter_destination(dst, suffix)
        for desc in dst.referrers(self.subject).descriptors:  # every type: cosign 3 filters none
            if desc.digest in self.carried_bundles:
                continue
            try:
                manifest = dst.fetch_manifest(desc.digest)
                if desc.artifact_type != MEDIA_BUNDLE and not looks_like_bundle(manifest):
                    continue
                stands = _bundle_stands(self, dst, manifest)
            except AcxError as exc:
                self.notes.append(f"destination bundle {desc.digest} could not be read ({exc}): left as it is")
                continue
            if not stands:
                err = remove_bundle(dst, self.subject, desc.digest)
                self.notes.append(err or f"destination bundle {desc.digest}: a level that does not stand, taken down")

    def _filter_destination(self, dst: Store, suffix: str) -> None:
        tag = cosign_tag(self.subject, suffix)
        try:
            manifest = dst.fetch_manifest(tag)
        except NotFoundError:
            return
        kept = self._standing_layers(dst, manifest, None)
        if len(kept) != len(manifest.layers):
            push_projection_layers(dst, self.subject, kept, suffix)
            self.notes.append(f"destination {tag}: {len(manifest.layers) - len(kept)} layer(s) of levels that do "
                              "not stand taken down")


__all__ = ["CosignCarry", "looks_like_bundle", "standing_credentials"]
