"""Whose is a status list's place? The level credentials in the repository that name it say (read, bounded).

A status list sits at ``acx-status-<uuid>``; the tag spells only the UUID, so anyone who can push there could
sign a list of their own for it. Planted at an empty tag, such a list was accepted by the gateway, which then
refused the verifier's own list there as "signed by someone else": every credential on that list then failed
closed. The place belongs to the issuer of the credentials that point at it
(:func:`acx_oci.evaluation.status_replace.list_owners` decides); this module finds those credentials.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from acx_oci.errors import AcxError
from acx_oci.model import LevelCredential
from acx_oci.oci import ARTIFACT_ATTESTATION, REFERRER_TAG_PREFIX, Store
from acx_oci.services.artifacts import MAX_CREDENTIAL_BYTES, STATUS_TAG_PREFIX, credential_layer

#: Registry reads one search may make (tags resolved, listings, manifests and credentials fetched).
MAX_OWNER_READS = 600


@dataclass
class CredentialMemo:
    """Credentials read before, by attestation digest (content-addressed: a digest's credential never changes);
    shared by the gateway's worker threads."""

    docs: dict[str, LevelCredential | None] = field(default_factory=dict)
    limit: int = 20_000
    lock: threading.Lock = field(default_factory=threading.Lock)

    def remember(self, digest: str, doc: LevelCredential | None) -> None:
        """Keep ``doc`` (None: no credential in that attestation), the oldest dropped past ``limit``."""
        with self.lock:
            if len(self.docs) >= self.limit:
                self.docs.pop(next(iter(self.docs)))
            self.docs[digest] = doc


def repository_credentials(store: Store, memo: CredentialMemo | None = None,
                           max_reads: int = MAX_OWNER_READS) -> tuple[list[LevelCredential], bool]:
    """The level credentials attached to the repository's tagged manifests, and whether the search was whole
    (False: a bound or an unreadable document cut it short; what was found still counts)."""
    memo = memo if memo is not None else CredentialMemo()
    reads, whole = 0, True
    subjects: list[str] = []
    for tag in store.list_tags():
        if tag.startswith((STATUS_TAG_PREFIX, "sha256-", REFERRER_TAG_PREFIX)):
            continue
        if reads >= max_reads // 2:  # half for the tags, the rest for what hangs on them
            whole = False
            break
        reads += 1
        try:
            digest = store.resolve(tag).digest
        except AcxError:
            whole = False
            continue
        if digest not in subjects:
            subjects.append(digest)
    out: list[LevelCredential] = []
    for subject in subjects:
        reads += 1
        try:
            listing = store.referrers(subject, ARTIFACT_ATTESTATION)
        except AcxError:
            whole = False
            continue
        whole = whole and not listing.partial
        for desc in listing.descriptors:
            known = desc.digest in memo.docs
            if not known:
                if reads + 2 > max_reads:
                    return out, False
                reads += 2
                try:
                    memo.remember(desc.digest, _read(store, desc.digest))
                except AcxError:  # unreadable now (a 503, a bad document): not remembered, the search not whole
                    whole = False
                    continue
            doc = memo.docs.get(desc.digest)
            if doc is not None:
                out.append(doc)
    return out, whole


def _read(store: Store, digest: str) -> LevelCredential | None:
    layer = credential_layer(store.fetch_manifest(digest))
    if layer is None:
        return None
    return LevelCredential.read_object(store.fetch_blob(layer.digest, MAX_CREDENTIAL_BYTES, size=layer.size),
                                       "credential")


__all__ = ["MAX_OWNER_READS", "CredentialMemo", "repository_credentials"]
