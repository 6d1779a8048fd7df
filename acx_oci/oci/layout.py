"""An OCI image layout directory (``oci:PATH[:TAG|@DIGEST]``), readable by skopeo.

Layout: ``oci-layout``, ``index.json`` and ``blobs/sha256/<hex>``. Tags are
``org.opencontainers.image.ref.name`` annotations on index.json entries, as
skopeo expects. Every write is a temp file renamed into place, and index.json
is read-modified-written under an ``fcntl`` lock so concurrent writers (threads
or processes) never lose entries. Every read is digest-verified.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acx_oci.crypto import StreamDigest, check_digest, sha256_digest
from acx_oci.errors import IntegrityError, LocalNotFoundError, UsageError
from acx_oci.jsonio import loads, loads_ijson
from acx_oci.oci.model import (
    EMPTY_JSON,
    MAX_MANIFEST_BYTES,
    MEDIA_DOCKER_LIST,
    MEDIA_DOCKER_MANIFEST,
    MEDIA_EMPTY,
    MEDIA_INDEX,
    MEDIA_MANIFEST,
    Descriptor,
    check_manifest_size,
    dump,
    media_type_of,
    parse_index,
    parse_manifest,
)
from acx_oci.oci.ref import Reference
from acx_oci.oci.referrers import descriptor_for_referrer, filter_artifact_type, subject_digest_of
from acx_oci.oci.store import (
    DEFAULT_MAX_BLOB_BYTES,
    DEFAULT_MAX_FILE_BYTES,
    Closing,
    ManifestReads,
    ReferrerListing,
    blob_limit,
    read_verified,
)

REF_NAME = "org.opencontainers.image.ref.name"
LAYOUT_FILE = "oci-layout"
LAYOUT_JSON = b'{"imageLayoutVersion":"1.0.0"}'
CHUNK = 1024 * 1024
_MANIFEST_TYPES = frozenset({MEDIA_MANIFEST, MEDIA_DOCKER_MANIFEST})
_INDEX_TYPES = frozenset({MEDIA_INDEX, MEDIA_DOCKER_LIST})
MAX_INDEX_DEPTH = 4
MAX_WALKED = 100_000


def _kind(mode: int) -> str:
    return ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else
            "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".acx-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


class LayoutStore(ManifestReads, Closing):
    """An OCI image layout; created on first push."""

    def __init__(self, reference: Reference) -> None:
        if reference.kind != "oci":
            raise UsageError(f"{reference}: not an OCI layout reference")
        self.reference = reference
        self.root = Path(reference.path)
        # manifest digest -> (subject, descriptor); content-addressed, so safe to remember once verified
        self._subjects: dict[str, tuple[str | None, Descriptor | None]] = {}
        self._children: dict[str, list[tuple[str, str]]] = {}  # index digest -> its entries (verified once)

    # ------------------------------------------------------------------ layout files

    def _blob_path(self, digest: str) -> Path:
        return self.root / "blobs" / "sha256" / check_digest(digest, "blob digest").split(":", 1)[1]

    def _init(self) -> None:
        """Create the layout on first write (idempotent, safe under concurrency)."""
        if self.root.exists() and not self.root.is_dir():
            raise UsageError(f"{self.root}: exists and is not a directory")
        for d in (self.root / "blobs", self.root / "blobs" / "sha256"):  # writes must stay inside the layout
            if d.is_symlink():
                raise UsageError(f"{d}: expected a directory, found a symlink")
        (self.root / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)
        if not (self.root / LAYOUT_FILE).exists():
            _atomic_write(self.root / LAYOUT_FILE, LAYOUT_JSON)
        if not (self.root / "index.json").exists():
            with self._locked():
                if not (self.root / "index.json").exists():
                    self._write_index([])

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Exclusive lock on index.json updates; index.json itself is replaced by rename."""
        try:  # never through a symlink: a dangling one would create its target outside the layout
            fd = os.open(self.root / ".index.json.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise UsageError(f"{self.root}/.index.json.lock: cannot open ({exc.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _read_index(self) -> list[dict[str, Any]]:
        path = self.root / "index.json"
        try:  # non-blocking open: a FIFO named index.json in a layout someone handed us must not hang the read
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                mode = os.fstat(fd).st_mode
                if not stat.S_ISREG(mode):
                    raise UsageError(f"{path}: expected a regular file, found {_kind(mode)}")
                os.set_blocking(fd, True)
                raw = f.read(MAX_MANIFEST_BYTES + 1)
        except FileNotFoundError:
            if not self.root.is_dir():
                raise LocalNotFoundError(f"{self.root}: no OCI image layout here") from None
            return []
        except OSError as exc:
            raise UsageError(f"{path}: cannot read ({exc.strerror})") from None
        check_manifest_size(raw, str(path))
        try:
            doc = loads_ijson(raw)
        except (ValueError, UnicodeDecodeError):
            raise UsageError(f"{path}: not I-JSON") from None
        ms = doc.get("manifests") if isinstance(doc, dict) else None
        if not isinstance(ms, list) or not all(isinstance(m, dict) for m in ms):
            raise UsageError(f"{path}: expected an image index with a manifests array")
        for m in ms:
            Descriptor.from_json(m, f"{path} entry")
        return ms

    def _write_index(self, entries: list[dict[str, Any]]) -> None:
        doc = {"schemaVersion": 2, "mediaType": MEDIA_INDEX, "manifests": entries}
        _atomic_write(self.root / "index.json", dump(doc))

    def _update_index(self, desc: Descriptor, tag: str | None) -> None:
        """Add ``desc`` (under ``tag``); a moved tag leaves its old manifest listed untagged."""
        with self._locked():
            entries = self._read_index()
            out: list[dict[str, Any]] = []
            for e in entries:
                ann = e.get("annotations") or {}
                if tag is not None and ann.get(REF_NAME) == tag:
                    if e["digest"] == desc.digest:
                        return
                    rest = {k: v for k, v in ann.items() if k != REF_NAME}
                    e = {k: v for k, v in e.items() if k != "annotations"}
                    if rest:
                        e["annotations"] = rest
                out.append(e)
            entry: dict[str, Any] = {"mediaType": desc.media_type, "digest": desc.digest, "size": desc.size}
            if desc.artifact_type:
                entry["artifactType"] = desc.artifact_type
            if tag is not None:
                entry["annotations"] = {REF_NAME: tag}
            # one untagged entry per digest at most, and none once it is tagged
            out = [e for e in out if not (e["digest"] == desc.digest and REF_NAME not in (e.get("annotations") or {}))]
            if tag is None and any(e["digest"] == desc.digest for e in out):
                if out != entries:
                    self._write_index(out)
                return
            out.append(entry)
            self._write_index(out)

    # ------------------------------------------------------------------ blobs

    def _has_blob(self, digest: str) -> bool:
        """Present as a regular file (a symlink is not a blob: a push replaces it)."""
        try:
            return stat.S_ISREG(os.lstat(self._blob_path(digest)).st_mode)
        except OSError:
            return False

    def blob_exists(self, digest: str) -> bool:
        """Whether the blob is stored (by name; reads verify the bytes)."""
        return self._has_blob(digest)

    def blob_file(self, digest: str) -> Path:
        """Where the blob ``digest`` lives (the layout is created): a verified stream may be renamed there."""
        self._init()
        return self._blob_path(digest)

    def push_blob(self, data: bytes, media_type: str, annotations: dict[str, str] | None = None) -> Descriptor:
        """Write the blob atomically unless it is already there; returns its descriptor."""
        desc = Descriptor.for_bytes(media_type, data, annotations)
        self._init()
        if not self._has_blob(desc.digest):
            _atomic_write(self._blob_path(desc.digest), data)
        return desc

    def push_blob_file(self, path: Path, media_type: str, annotations: dict[str, str] | None = None) -> Descriptor:
        """Stream a file into the layout, hashing as it copies, so a large layer is never held in memory."""
        self._init()
        seen = StreamDigest()
        fd, tmp = tempfile.mkstemp(prefix=".acx-", dir=self.root / "blobs" / "sha256")
        try:
            with Path(path).open("rb") as src, os.fdopen(fd, "wb") as out:
                while chunk := src.read(CHUNK):
                    seen.update(chunk)
                    out.write(chunk)
            digest = seen.digest
            if self._has_blob(digest):
                os.unlink(tmp)
            else:
                os.replace(tmp, self._blob_path(digest))
        except OSError as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise UsageError(f"{path}: cannot copy into {self.root} ({exc.strerror})") from None
        return Descriptor(media_type, digest, seen.size, dict(annotations or {}))

    def _open_blob(self, digest: str) -> Any:
        """Open a blob file that is a regular file, never through a symlink (a FIFO does not block the open).

        A layout is a directory anyone may have written: a blob that is a link to
        ``/dev/zero`` or to a file outside the layout, or a FIFO, is refused, not read.
        """
        path = self._blob_path(digest)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            raise LocalNotFoundError(f"{self.root}: blob {digest} not found") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UsageError(f"{self.root}: blob {digest}: expected a regular file, found a symlink") from None
            raise UsageError(f"{self.root}: blob {digest}: cannot open ({exc.strerror})") from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise UsageError(f"{self.root}: blob {digest}: expected a regular file, found {_kind(mode)}")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")

    def _read_verified(self, digest: str, cap: int, what: str, size: int | None = None) -> bytes:
        """Read at most ``cap`` bytes (exactly ``size`` when the descriptor gives it) and check the digest."""
        if size is not None and size > cap:
            raise UsageError(f"{self.root}: {what} {digest} is {size} bytes, over the {cap}-byte limit")
        with self._open_blob(digest) as f:
            data: bytes = f.read((cap if size is None else size) + 1)
        if size is not None and len(data) != size:
            raise IntegrityError(f"{self.root}: {what} {digest}: {'more' if len(data) > size else 'fewer'} "
                                 f"bytes than the {size} its descriptor gives (digest mismatch)")
        if len(data) > cap:
            raise UsageError(f"{self.root}: {what} {digest} exceeds the {cap}-byte limit")
        actual = sha256_digest(data)
        if actual != digest:
            raise IntegrityError(f"{self.root}: {what} {digest}: digest mismatch, found {actual}")
        return data

    def fetch_blob(self, digest: str, max_bytes: int = DEFAULT_MAX_BLOB_BYTES, size: int | None = None) -> bytes:
        """Read a blob, verifying its digest and refusing more than ``size`` or ``max_bytes``."""
        return self._read_verified(digest, max_bytes, "blob", size)

    def fetch_blob_to_file(self, digest: str, dest: Path, size: int | None = None,
                           max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> None:
        """Stream a blob to ``dest`` via a temporary in its directory, verified before it is renamed into place."""
        dest = Path(dest)
        limit = blob_limit(digest, size, max_bytes)
        fd, tmp = tempfile.mkstemp(prefix=".acx-blob-", dir=dest.parent)
        try:
            with self._open_blob(digest) as src, os.fdopen(fd, "wb") as out:
                read_verified(iter(lambda: src.read(CHUNK), b""), digest, size, limit, out.write,
                              f"{self.root}: blob {digest}")
            os.replace(tmp, dest)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise

    # ------------------------------------------------------------------ manifests

    def push_manifest(self, raw: bytes, media_type: str, tag: str | None = None) -> Descriptor:
        """Store exact manifest bytes as a blob, and in ``index.json`` under ``tag`` when given."""
        return self._push_manifest(raw, media_type, tag, None)

    def _push_manifest(self, raw: bytes, media_type: str, tag: str | None, artifact_type: str | None) -> Descriptor:
        check_manifest_size(raw, "manifest")
        self._init()
        try:
            doc = loads(raw, "manifest")
        except (ValueError, UnicodeDecodeError):
            raise UsageError("manifest: expected JSON") from None
        cfg = doc.get("config") if isinstance(doc, dict) else None
        if isinstance(cfg, dict) and cfg.get("mediaType") == MEDIA_EMPTY:
            self.push_blob(EMPTY_JSON, MEDIA_EMPTY)  # so the layout is complete for other tools
        desc = Descriptor(media_type, sha256_digest(raw), len(raw), artifact_type=artifact_type)
        if not self._has_blob(desc.digest):
            _atomic_write(self._blob_path(desc.digest), raw)
        self._update_index(desc, tag)
        return Descriptor(media_type, desc.digest, desc.size)

    def _entry_for(self, tag: str) -> dict[str, Any] | None:
        return next((e for e in self._read_index() if (e.get("annotations") or {}).get(REF_NAME) == tag), None)

    def _read_manifest_blob(self, digest: str) -> bytes:
        """Manifest bytes with a 4 MiB cap, verified against ``digest``."""
        return self._read_verified(digest, MAX_MANIFEST_BYTES, "manifest")

    def fetch_manifest_raw(self, target: str) -> tuple[bytes, str, str]:
        """A digest is read straight from the blobs; a tag is looked up in ``index.json``. Bytes are digest-verified."""
        entry: dict[str, Any] | None = None
        if target.startswith("sha256:"):
            digest = check_digest(target, "manifest digest")  # content-addressed: no index lookup needed
        else:
            entry = self._entry_for(target)
            if entry is None:
                raise LocalNotFoundError(f"{self.root}: tag {target!r} not found")
            digest = str(entry["digest"])
        raw = self._read_manifest_blob(digest)
        media_type = media_type_of(raw, str(entry["mediaType"]) if entry else MEDIA_MANIFEST)
        return raw, media_type, digest

    def tag(self, digest: str, tag: str) -> None:
        """Point ``tag`` at an existing manifest (read first, so a missing digest fails here)."""
        raw, media_type, _ = self.fetch_manifest_raw(check_digest(digest))
        self._update_index(Descriptor(media_type, digest, len(raw)), tag)

    def list_tags(self) -> list[str]:
        """The ``org.opencontainers.image.ref.name`` tags in ``index.json``; none for a layout not yet written."""
        if not (self.root / "index.json").exists():
            return []
        tags = [(e.get("annotations") or {}).get(REF_NAME) for e in self._read_index()]
        return [t for t in tags if isinstance(t, str)]

    # ------------------------------------------------------------------ referrers

    def push_referrer(self, raw: bytes, subject_digest: str, tag: str | None = None) -> Descriptor:
        """Store the referrer and list it in index.json (untagged unless ``tag``) so it stays reachable."""
        check_digest(subject_digest, "subject digest")
        manifest = parse_manifest(raw, "referrer manifest")
        if manifest.subject is None or manifest.subject.digest != subject_digest:
            raise UsageError(f"referrer manifest: subject must be {subject_digest}")
        self._push_manifest(raw, manifest.media_type, tag, manifest.artifact_type)
        desc = descriptor_for_referrer(manifest)
        self._subjects[manifest.digest] = (subject_digest, desc)
        return desc

    def referrers(self, subject_digest: str, artifact_type: str | None = None) -> ReferrerListing:
        """Every manifest reachable from index.json whose ``subject`` is ``subject_digest``.

        Reachable means listed in index.json or in an image index it lists, at any depth up to
        ``MAX_INDEX_DEPTH``: skopeo copies a ``sha256-<hex>`` tag-schema index in as one tagged
        entry, ORAS lists referrers at the top; both are found, and any tool's referrers count.
        A nested entry whose blob is missing (a partial copy) is skipped; at most
        ``MAX_WALKED`` manifests are read (more sets partial).
        """
        check_digest(subject_digest, "subject digest")
        if not (self.root / "index.json").exists():
            return ReferrerListing([], "scan", False)
        found: list[Descriptor] = []
        manifests, partial = self._reachable_manifests()
        for digest, top in manifests:
            if digest not in self._subjects:
                try:
                    self._subjects[digest] = self._referrer_info(digest)
                except LocalNotFoundError:
                    if top:
                        raise
                    continue
            subject, desc = self._subjects[digest]
            if subject == subject_digest and desc is not None:
                found.append(desc)
        return ReferrerListing(filter_artifact_type(found, artifact_type), "scan", partial)

    def _reachable_manifests(self) -> tuple[list[tuple[str, bool]], bool]:
        """(image manifest digest, listed at the top?) reachable from index.json; (found, partial)."""
        out: list[tuple[str, bool]] = []
        seen: set[str] = set()
        level: list[tuple[str, str]] = [(str(e["digest"]), str(e.get("mediaType", ""))) for e in self._read_index()]
        partial = False
        for depth in range(MAX_INDEX_DEPTH + 1):
            nested: list[tuple[str, str]] = []
            for digest, media_type in level:
                if digest in seen:
                    continue
                seen.add(digest)
                if len(seen) > MAX_WALKED:
                    return out, True
                if media_type in _MANIFEST_TYPES:
                    out.append((digest, depth == 0))
                elif media_type in _INDEX_TYPES:
                    nested += self._index_children(digest)
            if not nested:
                return out, partial
            level = nested
        return out, True

    def _index_children(self, digest: str) -> list[tuple[str, str]]:
        """(digest, media type) of an image index blob's entries; none if the blob is missing or not an index."""
        if digest not in self._children:
            try:
                entries = parse_index(self._read_manifest_blob(digest), f"index {digest}")
            except (LocalNotFoundError, UsageError):
                entries = []
            self._children[digest] = [(d.digest, d.media_type) for d in entries]
        return self._children[digest]

    def _referrer_info(self, digest: str) -> tuple[str | None, Descriptor | None]:
        """(subject digest, referrer descriptor) of a stored manifest; verified on read."""
        raw = self._read_manifest_blob(digest)
        try:
            doc = loads_ijson(raw)
        except (ValueError, UnicodeDecodeError):
            return None, None
        subject = subject_digest_of(doc)
        if subject is None:
            return None, None
        try:
            return subject, descriptor_for_referrer(parse_manifest(raw, f"manifest {digest}"))
        except UsageError:
            return None, None
