"""Referrer discovery on a registry: the OCI 1.1 Referrers API, and the referrers tag schema
(a ``sha256-<hex>`` image index) on registries without it.

What else the fallback path lists (acx's own attestation tags) comes in through the
store's ``fallback_scan`` hook; nothing here knows tag naming beyond the tag schema.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Protocol
from urllib.parse import urljoin

import requests

from acx_oci.crypto import check_digest
from acx_oci.errors import NotFoundError, RegistryError, UsageError
from acx_oci.oci.classify import classification_note, classify_referrers
from acx_oci.oci.model import MAX_MANIFEST_BYTES, MEDIA_INDEX, Descriptor, build_index, parse_index, parse_manifest
from acx_oci.oci.referrers import (
    descriptor_for_referrer,
    fallback_tag,
    filter_artifact_type,
    merge_descriptors,
    next_link,
)
from acx_oci.oci.registry.transport import Transport
from acx_oci.oci.store import ReferrerListing


class RegistryAccess(Protocol):
    """What the referrers paths need of :class:`acx_oci.oci.registry.client.RegistryStore` (kept abstract so
    the client can import this module without a cycle)."""

    host: str
    base: str
    repository: str
    transport: Transport
    max_referrers: int
    max_tags_scanned: int

    def fetch_manifest_raw(self, target: str) -> tuple[bytes, str, str]:
        """Exact manifest bytes, media type and digest for a tag or digest, verified."""

    def put_manifest(self, raw: bytes, media_type: str, target: str) -> requests.Response:
        """PUT exact manifest bytes under ``target`` (a tag or digest)."""

    def ensure_config_blob(self, raw: bytes) -> None:
        """Make sure every blob the manifest names is in the registry before the manifest goes up."""

    def list_tags_bounded(self, limit: int) -> tuple[list[str], bool]:
        """At most ``limit`` tags, and whether there were more."""

MAX_API_PAGES = 100
INDEX_WRITE_ATTEMPTS = 10
_UNSUPPORTED_REFERRERS_STATUS = frozenset({404, 405, 406, 501})

# Extra referrers for the fallback path: (store, subject digest, digests already listed) -> (found, partial).
FallbackScan = Callable[["RegistryAccess", str, set[str]], tuple[list[Descriptor], bool]]

# Referrers API support per registry host, learned once per process so every store (the gateway
# keeps one per repository) skips the probe; a host flag is tiny, and the map is cleared at the bound.
_API_SUPPORT: dict[str, bool] = {}
_API_SUPPORT_MAX = 1024
_API_LOCK = threading.Lock()


def api_support(host: str) -> bool | None:
    """What this process learned of ``host``'s Referrers API: True, False or None (not yet probed)."""
    with _API_LOCK:
        return _API_SUPPORT.get(host)


def forget_api_support(host: str | None = None) -> None:
    """Forget what ``host`` (None: every host) was seen to support (a different server now listens there)."""
    with _API_LOCK:
        if host is None:
            _API_SUPPORT.clear()
        else:
            _API_SUPPORT.pop(host, None)


def set_api_support(host: str, supported: bool) -> None:
    """Remember the probe's answer for every store on ``host``; the map is cleared at its bound."""
    with _API_LOCK:
        if host not in _API_SUPPORT and len(_API_SUPPORT) >= _API_SUPPORT_MAX:
            _API_SUPPORT.clear()
        _API_SUPPORT[host] = supported


def referrers_api(store: RegistryAccess, subject_digest: str,
                  artifact_type: str | None) -> tuple[list[Descriptor], bool, bool] | None:
    """(referrers, partial, filtered) via ``GET /v2/<name>/referrers/<digest>``; None without the API.

    ``filtered`` is True when the registry says it applied the ``artifactType`` filter
    (``OCI-Filters-Applied``); otherwise the entries are as listed, for the caller to
    classify and filter (go-containerregistry ignores the filter).
    """
    if api_support(store.host) is False:
        return None
    t = store.transport
    url: str | None = f"{store.base}referrers/{subject_digest}"
    params = {"artifactType": artifact_type} if artifact_type else None
    out: list[Descriptor] = []
    pages = 0
    visited: set[str] = set()
    filtered = artifact_type is not None
    while url is not None:
        resp = t.request("GET", url, params=params, headers={"Accept": MEDIA_INDEX})
        if resp.status_code in _UNSUPPORTED_REFERRERS_STATUS and pages == 0:
            _, code = t.failure(resp, f"GET referrers {subject_digest}")
            # a JSON NAME_UNKNOWN is about this repository (go-containerregistry answers so for one
            # that holds nothing yet), not about the host: use the fallback now, remember nothing
            if not (resp.status_code == 404 and code == "NAME_UNKNOWN"):
                set_api_support(store.host, False)
            return None
        if resp.status_code != 200:
            raise t.fail(resp, f"GET referrers {subject_digest}")
        filtered = filtered and "artifacttype" in resp.headers.get("OCI-Filters-Applied", "").lower()
        link = next_link(resp.headers.get("Link"))
        body = t.read_capped(resp, MAX_MANIFEST_BYTES, "referrers response")
        try:
            entries = parse_index(body, "referrers response")
        except UsageError:
            if pages == 0:
                set_api_support(store.host, False)
                return None
            raise RegistryError(f"registry {store.host}: referrers page {pages + 1} is not an image index") \
                from None
        set_api_support(store.host, True)
        out += entries
        pages += 1
        if len(out) >= store.max_referrers or (link and pages >= MAX_API_PAGES):
            return out[: store.max_referrers], True, filtered
        visited.add(resp.url)
        url = urljoin(resp.url, link) if link else None
        if url is not None and url in visited:  # a Link back to a page already read: a loop, not more pages
            return out[: store.max_referrers], True, filtered
        params = None
    return out, False, filtered


def read_index(store: RegistryAccess, subject_digest: str) -> list[Descriptor]:
    """Entries of the ``sha256-<hex>`` fallback index (empty if it does not exist)."""
    try:
        raw, _, digest = store.fetch_manifest_raw(fallback_tag(subject_digest))
    except NotFoundError:
        return []
    memo = getattr(store, "parsed_index", None)
    if memo is not None and memo[0] == digest:  # the same bytes (resolve lists attestations, then attempt records)
        return list(memo[1])
    entries = parse_index(raw, f"referrers index {fallback_tag(subject_digest)}")
    if hasattr(store, "parsed_index"):
        store.parsed_index = (digest, tuple(entries))
    return entries


def _readable_index(store: RegistryAccess, subject_digest: str) -> list[Descriptor]:
    """The fallback index, or empty when it is not one (whoever can write the tag can write anything there: a
    writer that gave up on it could never record a referrer again; the per-referrer tags keep the others listed)."""
    try:
        return read_index(store, subject_digest)
    except UsageError:  # malformed (a network failure is a RegistryError and still stops the write)
        return []


def write_index(store: RegistryAccess, subject_digest: str, entries: list[Descriptor]) -> list[Descriptor]:
    """Merge ``entries`` into the fallback index: read, merge, write, read back, retry with jitter.

    When the read-back shows another writer at work, keep re-checking until
    our entries survive two spaced reads. Returns the index as last read.
    Distribution ignores ``If-Match``, so a writer can still overwrite us
    after that; the per-referrer tags cover what is lost.
    """
    want = {d.digest for d in entries}
    tag = fallback_tag(subject_digest)
    contention = False
    stable = 0
    current: list[Descriptor] = []
    for attempt in range(INDEX_WRITE_ATTEMPTS):
        current = _readable_index(store, subject_digest)
        if want <= {d.digest for d in current}:
            stable += 1
            if not contention or stable >= 2:
                return current
            time.sleep(random.uniform(0.05, 0.15))
            continue
        stable = 0
        merged = merge_descriptors(current, entries)
        store.put_manifest(build_index(merged), MEDIA_INDEX, tag)
        time.sleep(random.uniform(0.0, 0.02))
        current = _readable_index(store, subject_digest)
        seen = {d.digest for d in current}
        if seen != {d.digest for d in merged}:
            contention = True
        if want <= seen:
            stable = 1
            if not contention:
                return current
        time.sleep(random.uniform(0.02, 0.08) * (1 + attempt % 3))
    return current


def push_referrer(store: RegistryAccess, raw: bytes, subject_digest: str, tag: str | None) -> Descriptor:
    """Push a manifest with a ``subject``; on a registry without the API, list it in the fallback index."""
    check_digest(subject_digest, "subject digest")
    manifest = parse_manifest(raw, "referrer manifest")
    if manifest.subject is None or manifest.subject.digest != subject_digest:
        raise UsageError(f"referrer manifest: subject must be {subject_digest}")
    store.ensure_config_blob(raw)
    resp = store.put_manifest(raw, manifest.media_type, manifest.digest)
    desc = descriptor_for_referrer(manifest)
    if resp.headers.get("OCI-Subject"):
        # the registry indexes the subject itself: an own tag would only be clutter (docs/concepts.md)
        set_api_support(store.host, True)
        return desc
    if api_support(store.host) or referrers_api(store, subject_digest, None) is not None:
        return desc
    if tag:  # without the API: what the fallback scan and `referrers repair` recover a lost index entry from
        store.put_manifest(raw, manifest.media_type, tag)
    after = write_index(store, subject_digest, [desc])
    if desc.digest not in {d.digest for d in after} and not tag:
        raise RegistryError(f"registry {store.host}: could not record referrer {desc.digest} in "
                            f"{fallback_tag(subject_digest)} after {INDEX_WRITE_ATTEMPTS} attempts")
    return desc


def list_referrers(store: RegistryAccess, subject_digest: str, artifact_type: str | None,
                   scan: FallbackScan | None) -> ReferrerListing:
    """Referrers from the API when the registry has it; else the fallback index plus what ``scan`` finds.

    With the API the registry indexes every manifest with a ``subject``
    itself (no read-merge-write to lose), so ``scan`` only runs on the
    fallback path. Either way, entries listed without a usable
    ``artifactType`` are classified by their manifests before filtering
    (see :mod:`acx_oci.oci.classify`); the count and a note are in the listing.
    """
    check_digest(subject_digest, "subject digest")
    api = referrers_api(store, subject_digest, artifact_type)
    if api is not None:
        entries, partial, filtered = api
        if filtered:
            return ReferrerListing(merge_descriptors([], entries), "api", partial)
        return _classified_listing(store, subject_digest, merge_descriptors([], entries), [], artifact_type,
                                   "api", partial)
    partial = False
    try:
        index = read_index(store, subject_digest)
    except UsageError:  # something else squats on the sha256-<hex> tag: own tags still count
        partial = True
        index = []
    extra: list[Descriptor] = []
    if scan is not None:
        extra, truncated = scan(store, subject_digest, {d.digest for d in index})
        partial = partial or truncated
    return _classified_listing(store, subject_digest, index, extra, artifact_type, "fallback", partial)


def _classified_listing(store: RegistryAccess, subject_digest: str, listed: list[Descriptor],
                        own: list[Descriptor], artifact_type: str | None, source: str,
                        partial: bool) -> ReferrerListing:
    """Classify ``listed`` (``own`` came from manifests already), bound, filter, note."""
    if len(listed) > store.max_referrers:
        partial = True
        listed = listed[: store.max_referrers]
    c = classify_referrers(store, subject_digest, listed)
    everything = merge_descriptors(c.descriptors, own)
    if len(everything) > store.max_referrers:
        partial = True
        everything = everything[: store.max_referrers]
    note = classification_note(c.classified, c.dropped, c.truncated)
    return ReferrerListing(filter_artifact_type(everything, artifact_type), source, partial or c.truncated,
                           c.classified, (note,) if note else ())
