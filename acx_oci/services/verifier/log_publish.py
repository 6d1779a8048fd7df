"""The verifier's side of the log's OCI layout (:mod:`acx_oci.services.artifacts.log_reader`): publication.

Only the verifier publishes its log, so the writer lives here and a consumer that reads the log (and the
gateway, through it) never imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import LogInconsistent, NotFoundError, UsageError
from acx_oci.oci import MEDIA_MANIFEST, Descriptor, Store, build_manifest
from acx_oci.services.artifacts import (
    ANNOTATION_ORIGIN,
    ANNOTATION_PATH,
    ANNOTATION_SIZE,
    ANNOTATION_VKEY,
    ARTIFACT_LOG,
    CHECKPOINT_TAG,
    MEDIA_CHECKPOINT,
    MEDIA_ENTRIES,
    MEDIA_TILE,
    MEDIA_TILE_INDEX,
    LogReader,
)
from acx_oci.services.verifier.log_tree import TransLog


def publication_tag(size: int) -> str:
    """The tag of the publication that brought the log to ``size``."""
    return f"tiles-{size}"


def later_publications(store: Store, size: int) -> list[str]:
    """The repository's ``tiles-<N>`` tags with N above ``size``: publications of a longer log than ``size``."""
    later = []
    for tag in store.list_tags():
        rest = tag.removeprefix("tiles-") if tag.startswith("tiles-") else ""
        if rest.isdigit() and len(rest) < 20 and int(rest) > size:
            later.append(tag)
    return sorted(later, key=lambda t: int(t.removeprefix("tiles-")))


def _media(path: str) -> str:
    return MEDIA_ENTRIES if path.startswith("tile/entries/") else MEDIA_TILE


@dataclass(frozen=True)
class LogPublication:
    """One publication: the size now served, how many tiles were uploaded, the checkpoint manifest's digest."""

    size: int
    uploaded: int
    manifest: str


def publish(log: TransLog, store: Store) -> LogPublication:
    """Upload what the registry lacks (tiles since its size), then move the ``checkpoint`` tag to ours.

    The tag moves last, so a reader never meets a checkpoint whose tiles are not there yet. What
    the repository already serves must be this log's past: another origin, a bigger tree, or a
    tile path served with other bytes than ours (another history) is refused, never papered over.
    """
    size = log.size
    if size == 0:
        raise UsageError("the log is empty: nothing to publish")
    try:
        served = LogReader(store).head()
    except NotFoundError:
        served = None
    if served is not None and served.checkpoint.origin != log.origin:
        raise UsageError(f"{store.reference} holds the log of {served.checkpoint.origin}, not of {log.origin}")
    if served is not None and served.checkpoint.size > size:
        raise LogInconsistent(f"{store.reference} serves a log of size {served.checkpoint.size}, this log has {size}")
    later = later_publications(store, size)
    if later:  # an older checkpoint served again (issue 42.2): publishing this log over it would fork it
        raise LogInconsistent(f"{store.reference} holds {later[0]}, a publication of a longer log than "
                              f"this one ({size} entries): this state is behind the log it published")
    before = served.index if served is not None else {}
    index: dict[str, str] = {}
    layers: list[Descriptor] = []
    for path in log.paths():
        data = log.read(path)
        digest = sha256_digest(data)
        if path in before:
            if before[path] != digest:
                raise LogInconsistent(f"{store.reference} serves {path} with other bytes: another history")
            index[path] = digest
            continue
        d = store.push_blob(data, _media(path))
        index[path] = d.digest
        layers.append(Descriptor(d.media_type, d.digest, d.size, {ANNOTATION_PATH: path}))
    if layers:
        store.push_manifest(build_manifest(ARTIFACT_LOG, layers, annotations={ANNOTATION_SIZE: str(size)}),
                            MEDIA_MANIFEST, tag=publication_tag(size))
    note = store.push_blob(log.checkpoint(), MEDIA_CHECKPOINT)
    idx = store.push_blob(canonical({"size": size, "tiles": index}), MEDIA_TILE_INDEX)
    raw = build_manifest(ARTIFACT_LOG, [note, idx], annotations={
        ANNOTATION_SIZE: str(size), ANNOTATION_ORIGIN: log.origin, ANNOTATION_VKEY: log.verifier.vkey()})
    desc = store.push_manifest(raw, MEDIA_MANIFEST, tag=CHECKPOINT_TAG)
    return LogPublication(size, len(layers), desc.digest)
