"""The one small interface every store (registry, OCI image layout) implements.

Stores are the only code that touches the network or the on-disk layout. They
own bytes: manifests go in and come out as exact bytes, and every manifest and
blob read is checked against the digest that names it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Self

from acx_oci.crypto import StreamDigest
from acx_oci.errors import IntegrityError, UsageError
from acx_oci.net import default_ca_file
from acx_oci.oci.model import Descriptor, Manifest, parse_manifest
from acx_oci.oci.ref import Reference

DEFAULT_MAX_BLOB_BYTES = 64 * 1024 * 1024  # read into memory
DEFAULT_MAX_FILE_BYTES = 4 * 1024 * 1024 * 1024  # streamed to a file when no descriptor size is given


def blob_limit(digest: str, size: int | None, max_bytes: int) -> int:
    """How many bytes a blob read may take: the descriptor's size when known (within the cap), else the cap."""
    if size is not None and size > max_bytes:
        raise UsageError(f"blob {digest} is {size} bytes by its descriptor, over the {max_bytes}-byte limit")
    return max_bytes if size is None else size


def check_received(digest: str, received: int, size: int | None, limit: int) -> None:
    """Stop a read the moment it passes what was promised (before the excess is kept or written)."""
    if received <= limit:
        return
    if size is not None:
        raise IntegrityError(f"blob {digest}: more bytes than the {size} its descriptor gives (digest mismatch)")
    raise UsageError(f"blob {digest} exceeds the {limit}-byte limit")


def check_complete(digest: str, received: int, size: int | None) -> None:
    """After a read ends: fewer bytes than the descriptor promised is an IntegrityError, like a wrong digest."""
    if size is not None and received != size:
        raise IntegrityError(f"blob {digest}: {received} bytes, its descriptor gives {size} (digest mismatch)")


def read_verified(chunks: Iterable[bytes], digest: str, size: int | None, limit: int,
                  sink: Callable[[bytes], object], where: str) -> None:
    """Pass a blob's pieces to ``sink``, stopping the moment they pass ``limit``, then check count and digest.

    One loop for every store's streamed read, so each refuses excess bytes and a wrong digest alike;
    ``where`` names the blob and its source in the mismatch error.
    """
    seen = StreamDigest()
    for chunk in chunks:
        check_received(digest, seen.size + len(chunk), size, limit)
        seen.update(chunk)
        sink(chunk)
    check_complete(digest, seen.size, size)
    if seen.digest != digest:
        raise IntegrityError(f"{where}: digest mismatch, found {seen.digest}")


@dataclass(frozen=True)
class StoreOptions:
    """Connection settings; loopback hosts use plain HTTP unless TLS is asked for (a CA file, ``insecure``, or a
    docker ``certs.d`` entry for the host: ``acx_oci.net.tls``)."""

    plain_http: bool = False
    insecure: bool = False  # skip TLS verification (whatever REQUESTS_CA_BUNDLE says)
    ca_file: str | None = field(default_factory=default_ca_file)  # a PEM bundle to trust; default: --ca-file
    timeout: float = 10.0  # seconds per request (connect timeout is min(timeout, 3))
    retries: int = 2  # extra attempts on 5xx / connection reset


@dataclass(frozen=True)
class ReferrerListing:
    """What a store's ``referrers()`` found, and how.

    ``source`` is the path used: "api" (registry Referrers API), "fallback"
    (tag-schema index plus own tags) or "scan" (OCI image layout).
    ``partial`` is True when a bound was hit (tags scanned, pages, entries).
    ``classified`` counts referrers whose type came from their own manifest because
    the listing's ``artifactType`` was missing or unusable (see ``acx_oci.oci.classify``);
    ``notes`` says so in words.
    """

    descriptors: list[Descriptor]
    source: str
    partial: bool
    classified: int = 0
    notes: tuple[str, ...] = ()


class Store(Protocol):
    """A repository in a registry, or an OCI image layout directory.

    A store may hold connections (a registry's HTTP pool): close it when done,
    best as ``with open_store(ref) as store:``.
    """

    reference: Reference

    def close(self) -> None:
        """Release what the store holds (connections); closing twice is harmless."""
        ...

    def __enter__(self) -> Self:
        ...

    def __exit__(self, *exc: object) -> None:
        ...

    def push_blob(self, data: bytes, media_type: str, annotations: dict[str, str] | None = None) -> Descriptor:
        """Upload bytes (skipped if already present) and return their descriptor."""
        ...

    def push_blob_file(self, path: Path, media_type: str, annotations: dict[str, str] | None = None) -> Descriptor:
        """Upload a file without reading it whole into memory."""
        ...

    def fetch_blob(self, digest: str, max_bytes: int = DEFAULT_MAX_BLOB_BYTES, size: int | None = None) -> bytes:
        """Read a blob, refusing more than ``max_bytes`` (or than ``size``, its descriptor's); digest-verified."""
        ...

    def fetch_blob_to_file(self, digest: str, dest: Path, size: int | None = None,
                           max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> None:
        """Stream a blob to ``dest``, stopping at ``size`` (else ``max_bytes``); verified before it is moved
        into place, and no temporary left behind on any failure."""
        ...

    def push_manifest(self, raw: bytes, media_type: str, tag: str | None = None) -> Descriptor:
        """Store exact manifest bytes, by digest, and under ``tag`` when given."""
        ...

    def fetch_manifest_raw(self, target: str) -> tuple[bytes, str, str]:
        """Return (exact bytes, media type, digest) for a tag or digest; verified."""
        ...

    def fetch_manifest(self, target: str) -> Manifest:
        """Fetch and parse an OCI image manifest by tag or digest."""
        ...

    def resolve(self, target: str) -> Descriptor:
        """Descriptor (media type, digest, size) of the manifest a tag or digest names."""
        ...

    def tag(self, digest: str, tag: str) -> None:
        """Point ``tag`` at the manifest ``digest`` (which must already be stored)."""
        ...

    def list_tags(self) -> list[str]:
        """Every tag of the repository (or layout), up to the store's listing cap."""
        ...

    def push_referrer(self, raw: bytes, subject_digest: str, tag: str | None = None) -> Descriptor:
        """Push a manifest with a ``subject`` and keep referrer discovery up to date."""
        ...

    def referrers(self, subject_digest: str, artifact_type: str | None = None) -> ReferrerListing:
        """Manifests whose ``subject`` is ``subject_digest`` (API, fallback index and own tags)."""
        ...


class Closing:
    """``with store:`` closes it on the way out (shared by both stores; a layout holds nothing to close)."""

    def close(self) -> None:
        """Nothing held by default."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ManifestReads:
    """``fetch_manifest`` and ``resolve`` in terms of ``fetch_manifest_raw`` (shared by both stores)."""

    def fetch_manifest_raw(self, target: str) -> tuple[bytes, str, str]:
        """Exact bytes, media type and digest for a tag or digest: the one read each store implements."""
        raise NotImplementedError

    def fetch_manifest(self, target: str) -> Manifest:
        """Fetch and parse an OCI image manifest; UsageError for an index or malformed bytes."""
        raw, _, _ = self.fetch_manifest_raw(target)
        return parse_manifest(raw, f"manifest {target}")

    def resolve(self, target: str) -> Descriptor:
        """The descriptor of the manifest ``target`` names, its bytes fetched and verified (not a HEAD)."""
        raw, media_type, digest = self.fetch_manifest_raw(target)
        return Descriptor(media_type, digest, len(raw))
