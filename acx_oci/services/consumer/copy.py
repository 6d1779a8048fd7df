"""``acx-oci copy``: a verified mirror of a cartridge, its attestations and their status lists.

``oras cp -r`` and ``skopeo copy`` move bytes; neither knows that a level
attestation is worth nothing without the status list its credential points to
(``acx-status-<uuid>`` in the same repository), and neither verifies anything.
Here every manifest and blob is read digest-verified and written as the exact
same bytes (so digests, and the credentials' bindings to them, survive), the
status lists the copied credentials name go along under the same tag, and on
a registry without the Referrers API the ``sha256-<hex>`` index is written
with full descriptors. With a trust file the source is resolved first (and
``only_verified`` keeps just the level attestations that resolution judged
VERIFIED, by digest: an allow-list, so one the source's listing mistyped and
resolve therefore never saw stays behind), and the destination is resolved
afterwards: a copy that does not give the same answer is a failure, not a
mirror. Every referrer is classified by its fetched manifest, never by the
type a listing gives it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from acx_oci import reasons
from acx_oci.errors import AcxError, NotFoundError, RegistryError, UsageError, VerificationError
from acx_oci.evaluation import list_owners
from acx_oci.model import STATUS_TAMPERED, LevelCredential, Resolution, issuer_id, status_entries
from acx_oci.oci import (
    ARTIFACT_ATTESTATION,
    ARTIFACT_CARTRIDGE,
    CONFIG_MEDIA_TYPES,
    CopyPlan,
    PlannedManifest,
    Progress,
    Reference,
    Store,
    StoreOptions,
    copy_blobs,
    open_store,
    parse_reference,
    plan_tree,
    push_manifests,
    read_referrer,
    referrer_tag,
)
from acx_oci.services.artifacts import (
    MAX_CREDENTIAL_BYTES,
    MEDIA_BUNDLE,
    credential_layer,
    fetch_status_list,
    load_cartridge,
    names_status_tag,
    status_tag,
)
from acx_oci.services.consumer.copy_cosign import CosignCarry, looks_like_bundle, standing_credentials
from acx_oci.services.consumer.copy_status import check_replacement
from acx_oci.services.consumer.resolve import ResolveLimits, resolve_loaded
from acx_oci.services.consumer.statuscache import StatusHistory
from acx_oci.trust import Trust

ACX_ARTIFACT_PREFIX = "application/vnd.acx."
MAX_REFERRER_DEPTH = 2  # referrers of the subject, and referrers of those (e.g. a signature on an attestation)


@dataclass
class CopyRequest:
    """What ``acx-oci copy`` is asked: source and destination, the trust and bounds that decide what is carried."""

    source: str
    destination: str
    now: datetime
    trust: Trust | None = None
    only_verified: bool = False
    store_options: StoreOptions | None = None
    status_history: StatusHistory | None = None
    limits: ResolveLimits | None = None
    progress: Progress | None = None


@dataclass
class CopyOutcome:
    """What a copy did and what it verified; ``to_json`` is the ``copy --json`` document."""

    source: str
    destination: str
    subject: str
    artifact_type: str | None
    manifests: int = 0
    blobs: int = 0
    blobs_copied: int = 0
    blobs_mounted: int = 0
    bytes_copied: int = 0
    bytes_total: int = 0
    referrers: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    status_lists: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    source_verdict: dict[str, Any] | None = None
    destination_same: bool | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``copy --json`` document (field names are a public interface: keep them)."""
        return {
            "source": self.source, "destination": self.destination, "subject": self.subject,
            "artifactType": self.artifact_type, "manifests": self.manifests, "blobs": self.blobs,
            "blobsCopied": self.blobs_copied, "blobsMounted": self.blobs_mounted,
            "bytesCopied": self.bytes_copied, "bytesTotal": self.bytes_total,
            "referrers": self.referrers, "skipped": self.skipped, "statusLists": self.status_lists,
            "verified": self.source_verdict, "destinationResolvesSame": self.destination_same,
            "notes": self.notes,
        }


def verdict(resolution: Resolution) -> dict[str, Any]:
    """What a copy must preserve: the signature status and, per claim, the answer and what it rests on."""
    return {
        "signature": resolution.signature_status,
        "capabilities": [{"id": c.capability.id, "effective": c.effective,
                          "acxLevel": c.best.acx_level if c.best else None,
                          "solver": c.best.solver if c.best else None,
                          "credentialDigest": c.best.credential_digest if c.best else None,
                          "attestationDigest": c.best.attestation_digest if c.best else None}
                         for c in resolution.capabilities],
    }


def _destination_tag(src: Reference, dst: Reference) -> str | None:
    if dst.digest is not None:
        raise UsageError(f"copy: destination {dst}: give a tag or none (the digest is the source's), not a digest")
    return dst.tag or src.tag


def _rejected(resolution: Resolution) -> dict[str, str]:
    """Attestation digest -> why it did not resolve as verified."""
    out: dict[str, str] = {}
    for cap in resolution.capabilities:
        for r in cap.rejected:
            out.setdefault(r.digest, ", ".join(r.codes))
    for r in resolution.unmatched:
        out.setdefault(r.digest, ", ".join(r.codes))
    return out


@dataclass(frozen=True)
class _Judged:
    """What the source's resolution said of attestations: an allow-list by digest, and reasons for the rest.

    Only ``verified`` counts as verified. A deny-list of what resolve rejected let through whatever resolve never
    saw: a referrer the source's listing calls another type (resolve filters by type, the copy reads the manifest),
    a level attestation hung on another referrer, or one pushed after resolve listed.
    """

    cartridge: str
    verified: frozenset[str]
    rejected: dict[str, str]
    judged: frozenset[str]

    @classmethod
    def of(cls, resolution: Resolution) -> _Judged:
        return cls(resolution.manifest_digest, resolution.verified_attestations(), _rejected(resolution),
                   resolution.judged)

    def why_not(self, digest: str, listed: str | None, subject: str) -> tuple[str, str]:
        """(code, reason) for a level attestation not on the allow-list."""
        if digest in self.rejected:
            return "rejected", self.rejected[digest]
        if digest in self.judged:
            return reasons.NOT_DECIDING, ("it passed resolve's checks, but no verified claim rests on it (a newer "
                                          "credential for the same claim and benchmark decides)")
        if subject != self.cartridge:
            return reasons.NOT_JUDGED, (f"a level attestation of {subject}, not of the cartridge: the source's "
                                        "resolution judges only the cartridge's attestations")
        if listed != ARTIFACT_ATTESTATION:
            return reasons.NOT_JUDGED, (f"the source's referrers listing calls it {listed or '(no artifactType)'}, "
                                        "so the source's resolution never judged it; its manifest says it is a "
                                        "level attestation")
        return reasons.NOT_JUDGED, "the source's resolution did not judge it (not in the listing it read)"


def _resolve(store: Store, target: str, req: CopyRequest, trust: Trust) -> Resolution:
    cart = load_cartridge(store, target, trust)
    return resolve_loaded(store, cart, trust, now=req.now, limits=req.limits, status_history=req.status_history,
                          reference=str(store.reference))


def _credential(src: Store, item: PlannedManifest) -> LevelCredential | None:
    """An attestation's credential (read from the source, digest-verified); None without one."""
    if item.manifest is None:
        return None
    layer = credential_layer(item.manifest)
    if layer is None:
        return None
    return LevelCredential.read_object(src.fetch_blob(layer.digest, MAX_CREDENTIAL_BYTES), f"credential {layer.digest}")


class _Planner:
    """Walks the source: subject, referrers (recursively, bounded), then the status lists they name."""

    def __init__(self, src: Store, req: CopyRequest, outcome: CopyOutcome, judged: _Judged | None,
                 cosign: CosignCarry) -> None:
        self.src, self.req, self.outcome, self.judged, self.cosign = src, req, outcome, judged, cosign
        self.plan = CopyPlan()
        self.status_urls: dict[str, None] = {}
        self.credentials: list[LevelCredential] = []  # every carried attestation's: whose status lists are whose
        self.attestations: list[str] = []
        self.unverified: dict[str, str] = {}  # attestation digest (copied or skipped) -> why_not code
        self.seen: set[str] = set()

    def tick(self, text: str) -> None:
        if self.req.progress is not None:
            self.req.progress(0, 0, text)

    def referrers_of(self, subject: str, depth: int) -> None:
        listing = self.src.referrers(subject)
        if listing.partial:
            self.outcome.notes.append(f"the source hit a bound listing the referrers of {subject}: the copy may "
                                      "be incomplete")
        for desc in listing.descriptors:
            if desc.digest in self.seen:
                continue
            self.seen.add(desc.digest)
            self.tick(f"planning: {len(self.plan.manifests)} manifests")
            try:
                item = read_referrer(self.src, desc.digest, subject)
            except NotFoundError:
                self.outcome.notes.append(f"referrer {desc.digest} is listed but missing in the source: not copied")
                continue
            if item.subject != subject:
                self.outcome.notes.append(f"referrer {desc.digest} is listed for {subject} but names "
                                          f"{item.subject}: not copied")
                continue
            # classified by the manifest just fetched (artifactType, else config mediaType), never by the listing;
            # a listing without a type, or with a config media type in its place, claims nothing worth a note
            artifact_type = item.manifest.artifact_type if item.manifest else None
            listed = desc.artifact_type
            if listed is not None and listed not in CONFIG_MEDIA_TYPES and listed != artifact_type:
                self.outcome.notes.append(f"referrer {item.digest} is listed as {listed} but its manifest says "
                                          f"{artifact_type}: classified by its manifest")
            if artifact_type == ARTIFACT_ATTESTATION and self.judged is not None \
                    and item.digest not in self.judged.verified:
                code, reason = self.judged.why_not(item.digest, listed, subject)
                self.unverified[item.digest] = code
                if self.req.only_verified:
                    self.outcome.skipped.append({"digest": item.digest, "artifactType": artifact_type,
                                                 "reason": reason, "code": code,
                                                 "listedArtifactType": listed})
                    continue
            if subject == self.cosign.subject and (artifact_type == MEDIA_BUNDLE or looks_like_bundle(item.manifest)) \
                    and not self.cosign.bundle_carried(self.src, item):
                continue
            if (artifact_type or "").startswith(ACX_ARTIFACT_PREFIX):
                item.tag = referrer_tag(item.digest, subject)  # as acx-oci pushes them: discovery reads both
            self.plan.add_image(item)
            self.outcome.referrers.append({"digest": item.digest, "artifactType": artifact_type, "subject": subject})
            if artifact_type == ARTIFACT_ATTESTATION:
                self.attestations.append(item.digest)
                if (cred := _credential(self.src, item)) is not None:
                    self.credentials.append(cred)
                    for e in status_entries(cred):
                        if isinstance(e.get("statusListCredential"), str):
                            self.status_urls.setdefault(e["statusListCredential"])
            if depth + 1 < MAX_REFERRER_DEPTH:
                self.referrers_of(item.digest, depth + 1)

    def status_lists(self, dst: Store) -> None:
        """Plan each named list by digest under its tag, unless the destination holds a newer one."""
        for url in self.status_urls:
            try:
                tag = status_tag(url)
            except UsageError as exc:
                self.outcome.notes.append(f"status list {url}: {exc} (not copied)")
                continue
            try:
                published = fetch_status_list(self.src, url)
            except UsageError as exc:
                raise VerificationError(f"{tag} in the source: {exc}") from None
            if published is None:
                self.outcome.notes.append(f"status list {url}: no {tag} in the source; resolving the copy needs "
                                          "it from elsewhere (--status-list or --allow-network)")
                continue
            owners = list_owners(self.credentials, functools.partial(names_status_tag, tag), self.req.trust,
                                 self.req.now)
            there = _destination_list(dst, url)
            if there is None and owners and issuer_id(published[0]) not in owners:  # nothing there to refuse for
                self.outcome.notes.append(f"status list {url}: the source's {tag} is signed by "
                                          f"{issuer_id(published[0])}, but the credentials that name it were issued "
                                          f"by {', '.join(sorted(owners))}: a planted list, not copied")
                continue
            if there is not None and there[1] != published[1]:
                # replacing a list: the source registry is not trusted, its list must verify and be newer
                kept = check_replacement(tag, url, published[0], there[0], self.req.trust, self.req.now, owners)
                if kept is not None:
                    self.outcome.notes.append(kept)
                    continue
            plan_tree(self.src, published[1], self.plan, tag)
            self.outcome.status_lists.append(tag)


def _destination_list(dst: Store, url: str) -> tuple[dict[str, Any], str] | None:
    """The destination's list for ``url``; None when absent or unusable (the source's list then replaces it)."""
    try:
        return fetch_status_list(dst, url)
    except RegistryError as exc:  # unreadable is not absent: a 503 here must not let an older list overwrite
        raise type(exc)(f"status list {url} in the destination could not be read, so it is not replaced (it may "
                        f"be newer than the source's): {exc}") from None
    except AcxError:
        return None


def copy_artifact(req: CopyRequest) -> CopyOutcome:
    """Plan (read and verify everything), copy blobs, push manifests, then check the destination."""
    if req.only_verified and req.trust is None:
        raise UsageError("copy: --only-verified needs --trust FILE (to know what verifies)")
    src_ref, dst_ref = parse_reference(req.source), parse_reference(req.destination)
    tag = _destination_tag(src_ref, dst_ref)
    with open_store(src_ref, req.store_options) as src, open_store(dst_ref, req.store_options) as dst:
        return _copy(req, src, dst, src_ref.target, tag)


def _copy(req: CopyRequest, src: Store, dst: Store, target: str, tag: str | None) -> CopyOutcome:
    planner_plan = CopyPlan()
    subject = plan_tree(src, target, planner_plan, tag)
    artifact_type = subject.manifest.artifact_type if subject.manifest else None
    outcome = CopyOutcome(str(src.reference), str(dst.reference.with_tag(tag).with_digest(subject.digest)),
                          subject.digest, artifact_type)
    resolution: Resolution | None = None
    if req.trust is not None:
        if artifact_type != ARTIFACT_CARTRIDGE:
            if req.only_verified:
                raise UsageError(f"copy --only-verified: {req.source} is {artifact_type}, not a cartridge")
            outcome.notes.append(f"not a cartridge ({artifact_type}): copied digest-verified, nothing resolved")
        else:
            resolution = _resolve(src, subject.digest, req, req.trust)
            if resolution.signature_status == STATUS_TAMPERED:
                raise VerificationError(f"copy: {req.source} is tampered; refusing to mirror it")
            if req.only_verified and resolution.partial:
                raise VerificationError("copy --only-verified: the source resolution hit a bound (partial); "
                                        "raise --max-referrers or copy without --only-verified")
    cosign = CosignCarry(subject.digest, standing_credentials(resolution))
    planner = _Planner(src, req, outcome, _Judged.of(resolution) if resolution else None, cosign)
    planner.plan = planner_plan
    planner.seen.add(subject.digest)
    planner.referrers_of(subject.digest, 0)
    cosign.plan_tags(src, planner.plan)
    planner.status_lists(dst)
    if resolution is not None:
        total = len(planner.attestations) + len(outcome.skipped)
        outcome.source_verdict = {
            **verdict(resolution),
            "attestations": total,
            # an allow-list: only what the source's resolution judged VERIFIED, by digest
            "verifiedAttestations": len([d for d in planner.attestations if d not in planner.unverified]),
            "rejectedAttestations": len(planner.unverified),  # copied or skipped: rejected, or never judged
            "unjudgedAttestations": len([c for c in planner.unverified.values() if c == reasons.NOT_JUDGED]),
        }
    plan = planner.plan
    outcome.blobs, outcome.bytes_total = len(plan.blobs), plan.total_bytes
    counts = copy_blobs(src, dst, plan, req.progress)
    outcome.blobs_copied, outcome.bytes_copied = counts.blobs_copied, counts.bytes_copied
    outcome.blobs_mounted = counts.blobs_mounted
    if req.progress is not None:
        req.progress(plan.total_bytes, plan.total_bytes, f"pushing {len(plan.manifests)} manifests")
    outcome.manifests = push_manifests(dst, plan)
    cosign.finish(dst)
    outcome.skipped += cosign.skipped
    outcome.notes += cosign.notes
    if resolution is not None and req.trust is not None:
        after = _resolve(dst, subject.digest, req, req.trust)
        outcome.destination_same = verdict(after) == verdict(resolution)
        if not outcome.destination_same:
            raise VerificationError(f"copy: {outcome.destination} does not resolve as {req.source} does "
                                    f"(source {verdict(resolution)}, copy {verdict(after)})")
    return outcome


__all__ = ["CopyOutcome", "CopyRequest", "copy_artifact", "verdict"]
