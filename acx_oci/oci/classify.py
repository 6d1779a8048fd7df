"""Classify referrers whose listing does not say what they are, by reading their manifests.

A referrer listing is only as good as whoever wrote it. ``skopeo copy --all`` of a
``sha256-<hex>`` index drops ``artifactType`` from its descriptors, and some registries
with the Referrers API (go-containerregistry's) report the *config* media type in its
place (``application/vnd.oci.empty.v1+json`` for every OCI 1.1 artifact). Filtering
such a listing by ``artifactType`` silently loses every acx attestation, so those
descriptors are replaced by what their manifests say: a bounded number of fetches per
listing, each digest-verified and size-capped by the store, remembered process-wide
(manifests are content-addressed, so what one says never changes).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from acx_oci.errors import IntegrityError, NotFoundError, UsageError
from acx_oci.oci.model import MEDIA_EMPTY, MEDIA_MANIFEST, Descriptor, parse_manifest
from acx_oci.timeutil import carry_deadline

MAX_CLASSIFY_FETCHES = 64
CLASSIFY_THREADS = 8

# An ``artifactType`` a listing shows that may be a config media type put in its place: the
# empty config (which an OCI 1.1 artifact's own artifactType never is) and the image configs.
CONFIG_MEDIA_TYPES = frozenset({
    MEDIA_EMPTY,
    "application/vnd.oci.image.config.v1+json",
    "application/vnd.docker.container.image.v1+json",
})

# manifest digest -> (subject digest or None, descriptor from the manifest); cleared at the bound.
_CLASSIFIED: dict[str, tuple[str | None, Descriptor]] = {}
_CLASSIFIED_MAX = 100_000
_LOCK = threading.Lock()


class ManifestSource(Protocol):
    """What classification needs of a store."""

    def fetch_manifest_raw(self, target: str) -> tuple[bytes, str, str]:
        """Exact manifest bytes, media type and digest for a tag or digest, verified."""


@dataclass(frozen=True)
class Classified:
    """A listing after classification.

    ``classified``: descriptors whose type came from their manifest (fetched or
    remembered); ``dropped``: listed digests whose manifest names another subject
    or fails its digest (not referrers of this subject); ``truncated``: suspects
    left as listed because the fetch bound was reached.
    """

    descriptors: list[Descriptor]
    classified: int
    dropped: int
    truncated: bool


def needs_classification(desc: Descriptor) -> bool:
    """An image manifest whose listed ``artifactType`` is missing or may be its config media type."""
    return desc.media_type == MEDIA_MANIFEST and (desc.artifact_type is None
                                                  or desc.artifact_type in CONFIG_MEDIA_TYPES)


def _descriptor_of(raw: bytes, digest: str) -> tuple[str | None, Descriptor] | None:
    try:
        m = parse_manifest(raw, f"manifest {digest}")
    except UsageError:
        return None
    desc = Descriptor(m.media_type, m.digest, len(raw), dict(m.annotations), m.artifact_type)
    return (m.subject.digest if m.subject else None), desc


def classify_referrers(store: ManifestSource, subject_digest: str, descs: list[Descriptor],
                       max_fetches: int = MAX_CLASSIFY_FETCHES, every: bool = False) -> Classified:
    """``descs`` with every suspect (see :func:`needs_classification`) replaced by its manifest's descriptor.

    A suspect whose manifest is missing or not an image manifest is kept as listed; one whose
    manifest names another subject, or whose bytes do not match its digest, is dropped.

    With ``every``, each image manifest listed is a suspect, whatever type the listing gives it: a
    listing's ``artifactType`` is a claim by whoever wrote the index, and what rewrites the index
    (``referrers repair``) must not carry a false one forward.
    """
    def suspect(d: Descriptor) -> bool:
        return d.media_type == MEDIA_MANIFEST if every else needs_classification(d)

    suspects = [d.digest for d in descs if suspect(d)]
    if not suspects:
        return Classified(list(descs), 0, 0, False)
    known: dict[str, tuple[str | None, Descriptor] | None] = {}
    with _LOCK:
        for dg in suspects:
            if dg in _CLASSIFIED:
                known[dg] = _CLASSIFIED[dg]
    todo = [dg for dg in dict.fromkeys(suspects) if dg not in known]
    truncated = len(todo) > max_fetches
    todo = todo[:max_fetches]
    bad: set[str] = set()

    def fetch(digest: str) -> tuple[str, tuple[str | None, Descriptor] | None]:
        try:
            raw, _, got = store.fetch_manifest_raw(digest)
        except NotFoundError:
            return digest, None
        except IntegrityError:
            bad.add(digest)
            return digest, None
        if got != digest:  # stores verify already; a second look costs nothing
            bad.add(digest)
            return digest, None
        return digest, _descriptor_of(raw, digest)

    if todo:
        with ThreadPoolExecutor(max_workers=min(CLASSIFY_THREADS, len(todo))) as pool:
            for digest, entry in pool.map(carry_deadline(fetch), todo):
                known[digest] = entry
                if entry is not None:
                    with _LOCK:
                        if len(_CLASSIFIED) >= _CLASSIFIED_MAX:
                            _CLASSIFIED.clear()
                        _CLASSIFIED[digest] = entry
    out: list[Descriptor] = []
    classified = dropped = 0
    for d in descs:
        entry = known.get(d.digest) if suspect(d) else None
        if d.digest in bad or (entry is not None and entry[0] != subject_digest):
            dropped += 1
            continue
        if entry is None:
            out.append(d)
            continue
        classified += 1
        # the manifest's own artifactType and annotations; the listing's annotations fill gaps
        out.append(Descriptor(entry[1].media_type, d.digest, entry[1].size,
                              {**d.annotations, **entry[1].annotations}, entry[1].artifact_type))
    return Classified(out, classified, dropped, truncated)


def classification_note(classified: int, dropped: int, truncated: bool) -> str | None:
    """A human sentence for what classification did (None when it did nothing)."""
    if not (classified or dropped or truncated):
        return None
    parts = []
    if classified:
        parts.append(f"{classified} referrer(s) listed without a usable artifactType (missing, or the config "
                     f"media type in its place) were classified by fetching their manifests")
    if dropped:
        parts.append(f"{dropped} listed referrer(s) were dropped (their manifest names another subject or "
                     f"fails its digest)")
    if truncated:
        parts.append(f"more than {MAX_CLASSIFY_FETCHES} needed classifying; the rest were left as listed")
    return "; ".join(parts)
