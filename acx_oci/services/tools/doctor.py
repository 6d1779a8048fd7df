"""``doctor``: what a registry really does, probed in a scratch repository.

Registries differ where acx-oci depends on them: the OCI 1.1 Referrers API (present, or a
200 that is not an image index), whether its listing carries each referrer's real
``artifactType`` (go-containerregistry reports the config media type), whether it honours
the ``artifactType`` filter (``OCI-Filters-Applied``), the ``OCI-Subject`` header on a
manifest PUT, tag listing and its ``Link`` pagination, how large a manifest it takes, and
how it asks for credentials. Each is tried, not guessed from a version string, and the
answer says which referrers mode acx-oci will use there. Every probe pushes only tiny
artifacts (the manifest-size probe pushes one 4 MiB manifest, skipped with
``size_probe=False``) into ``acx-doctor/<random>``, deleted afterwards where the registry
allows deletes.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from acx_oci.errors import AcxError, UsageError
from acx_oci.jsonio import loads
from acx_oci.oci import (
    EMPTY_DESCRIPTOR,
    MAX_MANIFEST_BYTES,
    MEDIA_INDEX,
    MEDIA_MANIFEST,
    Descriptor,
    RegistryStore,
    StoreOptions,
    dump,
    next_link,
    parse_challenge,
    parse_index,
    parse_reference,
)

PROBE_SUBJECT_TYPE = "application/vnd.acx.doctor.subject.v1"
PROBE_TYPE_A = "application/vnd.acx.doctor.a.v1"
PROBE_TYPE_B = "application/vnd.acx.doctor.b.v1"
CAPABILITIES = ("referrersApi", "referrersFalse200", "referrersArtifactType", "artifactTypeFilter",
                "ociSubjectHeader", "tagList", "tagListLimit", "tagPagination", "manifest4MiB", "manifestOver4MiB",
                "manifestDelete", "authRequired")


@dataclass
class DoctorReport:
    """One boolean per capability (None: not probed), what was seen, and the mode acx-oci uses."""

    registry: str
    repository: str
    capabilities: dict[str, bool | None] = field(default_factory=dict)
    auth_scheme: str = "none"  # none | bearer | basic | other
    details: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def mode(self) -> str:
        """``referrers-api`` when the registry serves the Referrers API, else the tag schema fallback."""
        return "referrers-api" if self.capabilities.get("referrersApi") else "tag-schema"

    def to_json(self) -> dict[str, Any]:
        """The ``doctor --json`` document: one field per capability, None for those not probed."""
        return {"registry": self.registry, "repository": self.repository, "mode": self.mode,
                **{k: self.capabilities.get(k) for k in CAPABILITIES}, "authScheme": self.auth_scheme,
                "details": dict(self.details), "notes": list(self.notes)}


def _manifest(artifact_type: str, subject: Descriptor | None, pad: int = 0, tag: str = "") -> bytes:
    """A tiny OCI 1.1 artifact manifest (built here, not by ``build_manifest``: the size probe goes past
    the 4 MiB limit that function enforces)."""
    annotations = {"dev.acx.doctor": tag or secrets.token_hex(8)}
    if pad:
        annotations["dev.acx.doctor.pad"] = "x" * pad
    doc: dict[str, Any] = {"schemaVersion": 2, "mediaType": MEDIA_MANIFEST, "artifactType": artifact_type,
                           "config": EMPTY_DESCRIPTOR.to_json(), "layers": [], "annotations": annotations}
    if subject is not None:
        doc["subject"] = subject.to_json()
    return dump(doc)


def _sized_manifest(size: int) -> bytes:
    """A manifest of exactly ``size`` bytes (padding in an annotation)."""
    base = len(_manifest(PROBE_TYPE_A, None, pad=1, tag="size"))
    raw = _manifest(PROBE_TYPE_A, None, pad=1 + size - base, tag="size")
    if len(raw) != size:
        raise UsageError(f"doctor: built a {len(raw)}-byte manifest, expected {size}")
    return raw


def run_doctor(host: str, options: StoreOptions | None = None, *, repository: str | None = None,
               size_probe: bool = True) -> DoctorReport:
    """Probe ``host`` in ``repository`` (default ``acx-doctor/<random>``); RegistryError if it cannot push."""
    repo = repository or f"acx-doctor/{secrets.token_hex(6)}"
    ref = parse_reference(f"{host}/{repo}")
    if ref.kind != "registry":
        raise UsageError(f"doctor: expected HOST[:PORT], found {host!r}")
    store = RegistryStore(ref, options or StoreOptions(), fallback_scan=None)
    report = DoctorReport(registry=host, repository=repo)
    try:
        _probe(store, report, size_probe)
    finally:
        store.close()
    return report


def _probe(store: RegistryStore, report: DoctorReport, size_probe: bool) -> None:
    t, caps, det = store.transport, report.capabilities, report.details
    root = store.base.rsplit("/v2/", 1)[0] + "/v2/"
    resp = t.request("GET", root, answer_challenge=False)
    resp.close()
    challenge = resp.headers.get("WWW-Authenticate", "")
    caps["authRequired"] = resp.status_code == 401
    if resp.status_code == 401:
        scheme = parse_challenge(challenge)[0].lower() if challenge else ""
        report.auth_scheme = scheme if scheme in ("bearer", "basic") else "other"
        det["authChallenge"] = challenge[:200]
    det["v2"] = f"GET /v2/: HTTP {resp.status_code}"

    # a subject and two referrers of different types
    subject_raw = _manifest(PROBE_SUBJECT_TYPE, None, tag="subject")
    subject = store.push_manifest(subject_raw, MEDIA_MANIFEST, "subject")
    subject_desc = Descriptor(MEDIA_MANIFEST, subject.digest, subject.size)
    ref_a = _manifest(PROBE_TYPE_A, subject_desc)
    store.ensure_config_blob(ref_a)
    put = store.put_manifest(ref_a, MEDIA_MANIFEST, Descriptor.for_bytes(MEDIA_MANIFEST, ref_a).digest)
    caps["ociSubjectHeader"] = put.headers.get("OCI-Subject") == subject.digest
    ref_b = _manifest(PROBE_TYPE_B, subject_desc)
    digest_b = store.push_manifest(ref_b, MEDIA_MANIFEST).digest
    digest_a = Descriptor.for_bytes(MEDIA_MANIFEST, ref_a).digest

    _probe_referrers(store, report, subject.digest, digest_a, digest_b)
    _probe_tags(store, report)
    if size_probe:
        _probe_size(store, report)
    else:
        report.notes.append("manifest size not probed (--no-size-probe)")
    deleted = _delete(store, [digest_a, digest_b, subject.digest])
    caps["manifestDelete"] = deleted
    if not deleted:
        report.notes.append(f"the registry refused deletes: remove {report.repository} by hand if it matters")
    _summarize(report)


def _probe_referrers(store: RegistryStore, report: DoctorReport, subject: str, digest_a: str,
                     digest_b: str) -> None:
    t, caps, det = store.transport, report.capabilities, report.details
    url = f"{store.base}referrers/{subject}"
    resp = t.request("GET", url, headers={"Accept": MEDIA_INDEX})
    body = t.read_capped(resp, MAX_MANIFEST_BYTES, "referrers response", truncate=True)
    det["referrers"] = f"GET referrers: HTTP {resp.status_code}, {resp.headers.get('Content-Type', '-')}"
    entries: list[Descriptor] | None = None
    if resp.status_code == 200:
        try:
            entries = parse_index(body, "referrers response")
        except (UsageError, AcxError):
            entries = None
    caps["referrersFalse200"] = resp.status_code == 200 and entries is None
    caps["referrersApi"] = entries is not None
    if entries is None:
        caps["referrersArtifactType"] = caps["artifactTypeFilter"] = None
        return
    listed = {d.digest: d.artifact_type for d in entries}
    if not {digest_a, digest_b} <= set(listed):
        report.notes.append("the Referrers API answered but did not list both probe referrers")
    caps["referrersArtifactType"] = listed.get(digest_a) == PROBE_TYPE_A and listed.get(digest_b) == PROBE_TYPE_B
    det["listedArtifactType"] = str(listed.get(digest_a))
    resp = t.request("GET", url, params={"artifactType": PROBE_TYPE_A}, headers={"Accept": MEDIA_INDEX})
    applied = "artifacttype" in resp.headers.get("OCI-Filters-Applied", "").lower()
    body = t.read_capped(resp, MAX_MANIFEST_BYTES, "referrers response", truncate=True)
    try:
        filtered = {d.digest for d in parse_index(body, "filtered referrers response")}
    except AcxError:
        filtered = set()
    caps["artifactTypeFilter"] = resp.status_code == 200 and applied and filtered == {digest_a}
    det["filter"] = f"OCI-Filters-Applied: {resp.headers.get('OCI-Filters-Applied', '(absent)')}, " \
                    f"{len(filtered)} listed for one of two types"


def _probe_tags(store: RegistryStore, report: DoctorReport) -> None:
    t, caps, det = store.transport, report.capabilities, report.details
    for tag in ("page-1", "page-2"):
        store.tag(store.resolve("subject").digest, tag)
    resp = t.request("GET", f"{store.base}tags/list")
    body = t.read_capped(resp, 1024 * 1024, "tag list", truncate=True)
    try:
        tags = loads(body, "tag list", ijson=False).get("tags") or []
    except (ValueError, AttributeError, RecursionError):
        tags = []
    tags = [x for x in tags if isinstance(x, str)] if isinstance(tags, list) else []  # a hostile answer: no TypeError
    caps["tagList"] = resp.status_code == 200 and {"subject", "page-1", "page-2"} <= set(tags)
    resp = t.request("GET", f"{store.base}tags/list", params={"n": "1"})
    link = next_link(resp.headers.get("Link"))
    body = t.read_capped(resp, 1024 * 1024, "tag list", truncate=True)
    try:
        page = loads(body, "tag list", ijson=False).get("tags") or []
    except (ValueError, AttributeError, RecursionError):
        page = []
    caps["tagListLimit"] = resp.status_code == 200 and len(page) == 1
    caps["tagPagination"] = caps["tagListLimit"] and link is not None
    det["tagPage"] = f"n=1: {len(page)} tag(s), Link {'present' if link else 'absent'}"


def _probe_size(store: RegistryStore, report: DoctorReport) -> None:
    t, caps = store.transport, report.capabilities
    for key, size in (("manifest4MiB", MAX_MANIFEST_BYTES), ("manifestOver4MiB", MAX_MANIFEST_BYTES + 1024)):
        raw = _sized_manifest(size)
        digest = Descriptor.for_bytes(MEDIA_MANIFEST, raw).digest
        resp = t.request("PUT", f"{store.base}manifests/{digest}", body=raw, headers={"Content-Type": MEDIA_MANIFEST})
        resp.close()
        caps[key] = resp.status_code in (200, 201, 202)
        report.details[key] = f"PUT {size} bytes: HTTP {resp.status_code}"
        if caps[key]:
            _delete(store, [digest])


def _delete(store: RegistryStore, digests: list[str]) -> bool:
    ok = True
    for d in digests:
        resp = store.transport.request("DELETE", f"{store.base}manifests/{d}")
        resp.close()
        ok = ok and resp.status_code in (200, 202, 204)
    return ok


def _summarize(report: DoctorReport) -> None:
    caps, notes = report.capabilities, report.notes
    if caps.get("referrersApi"):
        notes.append("acx-oci lists referrers with the Referrers API and writes no sha256-<hex> index here")
        if not caps.get("referrersArtifactType"):
            notes.append(f"the listing reports {report.details.get('listedArtifactType')} as artifactType, not "
                         f"the manifests' own: acx-oci classifies such referrers by fetching their manifests "
                         f"(bounded, shown as classifiedByManifest)")
        if not caps.get("artifactTypeFilter"):
            notes.append("the artifactType filter is not applied by the registry: acx-oci filters client-side")
    else:
        if caps.get("referrersFalse200"):
            notes.append("GET referrers answers 200 with something that is not an image index: treated as no API")
        notes.append("no Referrers API: acx-oci keeps a sha256-<hex> tag-schema index plus an acx-att- tag per "
                     "attestation, and finds referrers through both")
    if caps.get("referrersApi") and not caps.get("ociSubjectHeader"):
        notes.append("no OCI-Subject header on manifest PUT: acx-oci asks the Referrers API once per host instead")
    if caps.get("tagListLimit") and not caps.get("tagPagination"):
        notes.append("tag listing honours n but sends no Link: acx-oci asks for the next page with last=")
    elif not caps.get("tagListLimit"):
        notes.append("tag listing ignores n: acx-oci reads the whole list in one response (bounded)")
