"""Referrer discovery helpers: pure merge/filter logic plus ``repair_referrers``.

Registries without the OCI 1.1 Referrers API keep referrers in an image index
tagged ``sha256-<hex of the subject digest>``. CNCF Distribution ignores
``If-Match``, so two writers doing read-merge-write can lose an entry; every
acx referrer therefore also gets a tag of its own (``acx-att-...``) and
discovery reads both. ``repair_referrers`` folds what the tags show back into
the index.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from acx_oci.crypto import check_digest
from acx_oci.errors import NotFoundError, UsageError
from acx_oci.oci.classify import classify_referrers
from acx_oci.oci.model import MEDIA_INDEX, Descriptor, Manifest, build_index, parse_manifest
from acx_oci.oci.store import ReferrerListing
from acx_oci.timeutil import carry_deadline

REFERRER_TAG_PREFIX = "acx-att-"
DEFAULT_MAX_TAGS_SCANNED = 10_000
DEFAULT_MAX_REFERRERS = 10_000
FETCH_THREADS = 8

# acx-att-<16 hex of the referrer digest> or acx-att-<16 hex of subject>-<16 hex of referrer>
_OWN_TAG_RE = re.compile(r"^acx-att-(?:(?P<subject>[0-9a-f]{16})-)?(?P<digest>[0-9a-f]{16})\Z")
_LINK_RE = re.compile(r"<(?P<url>[^>]*)>\s*;(?P<params>[^,]*)")


def fallback_tag(subject_digest: str) -> str:
    """Tag of the referrers-tag-schema index for ``subject_digest`` (``sha256-<hex>``)."""
    check_digest(subject_digest, "subject digest")
    algo, hexpart = subject_digest.split(":", 1)
    return f"{algo}-{hexpart}"


def referrer_tag(digest: str, subject_digest: str | None = None) -> str:
    """Own tag for a referrer: ``acx-att-<16 hex>`` or, with the subject, ``acx-att-<subj16>-<16 hex>``.

    Naming the subject in the tag lets discovery skip other subjects' tags
    without fetching them; both forms are understood when scanning.
    """
    check_digest(digest, "referrer digest")
    own = digest.split(":", 1)[1][:16]
    if subject_digest is None:
        return REFERRER_TAG_PREFIX + own
    check_digest(subject_digest, "subject digest")
    return f"{REFERRER_TAG_PREFIX}{subject_digest.split(':', 1)[1][:16]}-{own}"


def parse_own_tag(tag: str) -> tuple[str | None, str] | None:
    """(subject hex prefix or None, referrer hex prefix) for an ``acx-att-`` tag, else None."""
    m = _OWN_TAG_RE.match(tag)
    if not m:
        return None
    return m.group("subject"), m.group("digest")


def descriptor_for_referrer(manifest: Manifest) -> Descriptor:
    """Index entry for a referrer: media type, digest, size, artifactType and its annotations."""
    return Descriptor(
        media_type=manifest.media_type,
        digest=manifest.digest,
        size=len(manifest.raw),
        annotations=dict(manifest.annotations),
        artifact_type=manifest.artifact_type,
    )


def merge_descriptors(existing: Iterable[Descriptor], new: Iterable[Descriptor]) -> list[Descriptor]:
    """Union by digest, keeping ``existing`` order and its entries when both have a digest."""
    out: list[Descriptor] = []
    seen: set[str] = set()
    for d in (*existing, *new):
        if d.digest not in seen:
            seen.add(d.digest)
            out.append(d)
    return out


def filter_artifact_type(descs: Iterable[Descriptor], artifact_type: str | None) -> list[Descriptor]:
    """A listing narrowed by its ``artifactType``: a way to fetch less, never a classification (a listing can
    mistype an entry; what it is comes from its fetched manifest)."""
    return [d for d in descs if artifact_type is None or d.artifact_type == artifact_type]


def subject_digest_of(doc: Any) -> str | None:
    """The ``subject.digest`` of a parsed manifest document, if it has one."""
    if isinstance(doc, dict):
        subj = doc.get("subject")
        if isinstance(subj, dict) and isinstance(subj.get("digest"), str):
            return str(subj["digest"])
    return None


def next_link(header: str | None) -> str | None:
    """The ``rel="next"`` target of an RFC 8288 ``Link`` header (may be relative)."""
    if not header:
        return None
    for m in _LINK_RE.finditer(header):
        params = m.group("params").replace(" ", "")
        if 'rel="next"' in params or "rel=next" in params:
            return m.group("url")
    return None


class TagScanStore(Protocol):
    """What ``scan_own_tags`` needs from a registry store."""

    host: str
    repository: str
    max_tags_scanned: int

    def list_tags_bounded(self, limit: int) -> tuple[list[str], bool]:
        """At most ``limit`` tags, and whether there were more."""

    def fetch_manifest_raw(self, target: str) -> tuple[bytes, str, str]:
        """Exact manifest bytes, media type and digest for a tag or digest, verified."""


# Own tags are content-named (acx-att-<hex prefix of the digest>), so what a tag pointed to can be
# remembered process-wide (repeat discovery skips refetching): (host, repo, tag) -> (digest, subject,
# descriptor); only entries whose digest matches the tag's prefix; cleared when it reaches the bound.
_TAG_CACHE: dict[tuple[str, str, str], tuple[str, str | None, Descriptor]] = {}
_TAG_CACHE_MAX = 200_000
_CACHE_LOCK = threading.Lock()


def scan_own_tags(store: TagScanStore, subject_digest: str, known: set[str]) -> tuple[list[Descriptor], bool]:
    """Referrers of ``subject_digest`` under ``acx-att-`` tags but missing from ``known``; (found, partial).

    ``partial`` is True when the tag listing hit ``store.max_tags_scanned``.
    """
    tags, truncated = store.list_tags_bounded(store.max_tags_scanned)
    subject_hex = subject_digest.split(":", 1)[1]
    known_prefixes = {d.split(":", 1)[1][:16] for d in known}
    found: list[Descriptor] = []
    todo: list[str] = []
    for t in tags:
        if not t.startswith(REFERRER_TAG_PREFIX):
            continue
        parsed = parse_own_tag(t)
        if parsed is not None:
            subj16, dig16 = parsed
            if subj16 is not None and not subject_hex.startswith(subj16):
                continue
            if dig16 in known_prefixes:
                continue
        with _CACHE_LOCK:
            hit = _TAG_CACHE.get((store.host, store.repository, t))
        if hit is not None:
            if hit[1] == subject_digest and hit[0] not in known:
                found.append(hit[2])
            continue
        todo.append(t)

    def load(t: str) -> tuple[str, str | None, Descriptor] | None:
        try:
            raw, _, digest = store.fetch_manifest_raw(t)
        except NotFoundError:
            return None
        try:
            m = parse_manifest(raw, f"manifest {t}")
        except UsageError:
            return None
        entry = (digest, m.subject.digest if m.subject else None, descriptor_for_referrer(m))
        parsed = parse_own_tag(t)
        if parsed is not None and digest.split(":", 1)[1].startswith(parsed[1]):
            with _CACHE_LOCK:
                if len(_TAG_CACHE) >= _TAG_CACHE_MAX:
                    _TAG_CACHE.clear()
                _TAG_CACHE[(store.host, store.repository, t)] = entry
        return entry

    if todo:
        with ThreadPoolExecutor(max_workers=FETCH_THREADS) as pool:
            for entry in pool.map(carry_deadline(load), todo):
                if entry is not None and entry[1] == subject_digest and entry[0] not in known:
                    found.append(entry[2])
    return merge_descriptors([], found), truncated


class ReferrerIndexStore(Protocol):
    """What ``repair_referrers`` needs: stores that keep a fallback index implement it."""

    def referrers(self, subject_digest: str, artifact_type: str | None = None) -> ReferrerListing:
        """The store's listing before repair: what is already discoverable."""

    def read_referrers_index(self, subject_digest: str) -> list[Descriptor]:
        """The fallback referrers index of ``subject_digest`` as stored (empty when there is none)."""

    def write_referrers_index(self, subject_digest: str, entries: list[Descriptor]) -> list[Descriptor]:
        """Replace the fallback index with ``entries``; returns what it now holds."""


def repair_referrers(store: Any, subject_digest: str) -> tuple[list[Descriptor], list[Descriptor]]:
    """Rewrite the fallback index so it lists every referrer discovery finds, each fully described.

    Every entry gets its ``artifactType`` and annotations from its own manifest
    (:func:`acx_oci.oci.classify.classify_referrers`, digest-verified, one fetch per
    entry): those that lost it (``skopeo copy --all`` drops it), carry a config media
    type in its place, or were given a false one by whoever wrote the index; entries whose manifest names
    another subject are removed. A merge would keep the stripped entries (it
    keeps what the index has per digest), so then the index is replaced.

    Returns (entries before, entries after). Stores that need no index (an OCI
    image layout, or a registry with the Referrers API) report the referrers
    they list as both.
    """
    check_digest(subject_digest, "subject digest")
    if not (hasattr(store, "read_referrers_index") and hasattr(store, "write_referrers_index")):
        found = list(store.referrers(subject_digest).descriptors)
        return found, found
    before: list[Descriptor] = list(store.read_referrers_index(subject_digest))
    listing: ReferrerListing = store.referrers(subject_digest)
    everything = list(listing.descriptors)
    if listing.source == "api":
        return everything, everything
    typed = classify_referrers(store, subject_digest, before, max_fetches=max(1, len(before)), every=True).descriptors
    merged = merge_descriptors(typed, everything)
    if merged == before:
        return before, before
    if typed != before:
        store.put_manifest(build_index(merged), MEDIA_INDEX, fallback_tag(subject_digest))
    after: list[Descriptor] = list(store.write_referrers_index(subject_digest, merged))
    return before, after


def repair_changes(before: list[Descriptor], after: list[Descriptor]) -> tuple[list[str], list[str], list[str]]:
    """(added, restored, removed) digests between two index listings; restored = same digest, now described
    differently (``artifactType`` or annotations put back from the manifest)."""
    old = {d.digest: d for d in before}
    new = {d.digest: d for d in after}
    added = sorted(set(new) - set(old))
    restored = sorted(d for d in set(new) & set(old) if new[d] != old[d])
    removed = sorted(set(old) - set(new))
    return added, restored, removed
