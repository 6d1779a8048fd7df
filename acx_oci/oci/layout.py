"""An OCI image layout directory (``oci:PATH[:TAG|@DIGEST]``), readable by skopeo.

Layout: ``oci-layout``, ``index.json`` and ``blobs/sha256/<hex>``. Tags are
``org.opencontainers.image.ref.name`` annotations on index.json entries, as
skopeo expects. Every write is a temp file renamed into place, and index.json
is read-modified-written under an ``fcntl`` lock so concurrent writers (threads
or processes) never lose entries. Every read is digest-verified.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acx_oci.crypto.digest import check_digest, sha256_digest
from acx_oci.errors import IntegrityError, LocalNotFoundError, UsageError
from acx_oci.jsonio import loads, loads_ijson
from acx_oci.oci.model import (
    EMPTY_JSON,
    MAX_MANIFEST_BYTES,
    MEDIA_EMPTY,
    MEDIA_INDEX,
    MEDIA_MANIFEST,
    Descriptor,
    check_manifest_size,
    dump,
    media_type_of,
    parse_manifest,
)
from acx_oci.oci.ref import Reference
from acx_oci.oci.referrers import descriptor_for_referrer, filter_artifact_type, subject_digest_of
from acx_oci.oci.store import DEFAULT_MAX_BLOB_BYTES, ManifestReads, ReferrerListing

REF_NAME = "org.opencontainers.image.ref.name"
LAYOUT_FILE = "oci-layout"
LAYOUT_JSON = b'{"imageLayoutVersion":"1.0.0"}'
CHUNK = 1024 * 1024
_MANIFEST_TYPES = frozenset({MEDIA_MANIFEST, "application/vnd.docker.distribution.manifest.v2+json"})


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


class LayoutStore(ManifestReads):
    """An OCI image layout; created on first push."""

    def __init__(self, reference: Reference) -> None:
        if reference.kind != "oci":
            raise UsageError(f"{reference}: not an OCI layout reference")
        self.reference = reference
        self.root = Path(reference.path)
        # manifest digest -> (subject, descriptor); content-addressed, so safe to remember once verified
        self._subjects: dict[str, tuple[str | None, Descriptor | None]] = {}

    # ------------------------------------------------------------------ layout files

    def _blob_path(self, digest: str) -> Path:
        return self.root / "blobs" / "sha256" / check_digest(digest, "blob digest").split(":", 1)[1]

    def _init(self) -> None:
        """Create the layout on first write (idempotent, safe under concurrency)."""
        if self.root.exists() and not self.root.is_dir():
            raise UsageError(f"{self.root}: exists and is not a directory")
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
        fd = os.open(self.root / ".index.json.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _read_index(self) -> list[dict[str, Any]]:
        path = self.root / "index.json"
        try:
            with path.open("rb") as f:
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
        return self._blob_path(digest).is_file()

    def push_blob(self, data: bytes, media_type: str, annotations: dict[str, str] | None = None) -> Descriptor:
        desc = Descriptor.for_bytes(media_type, data, annotations)
        self._init()
        if not self._has_blob(desc.digest):
            _atomic_write(self._blob_path(desc.digest), data)
        return desc

    def push_blob_file(self, path: Path, media_type: str, annotations: dict[str, str] | None = None) -> Descriptor:
        self._init()
        h = hashlib.sha256()
        size = 0
        fd, tmp = tempfile.mkstemp(prefix=".acx-", dir=self.root / "blobs" / "sha256")
        try:
            with Path(path).open("rb") as src, os.fdopen(fd, "wb") as out:
                while chunk := src.read(CHUNK):
                    h.update(chunk)
                    size += len(chunk)
                    out.write(chunk)
            digest = "sha256:" + h.hexdigest()
            if self._has_blob(digest):
                os.unlink(tmp)
            else:
                os.replace(tmp, self._blob_path(digest))
        except OSError as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise UsageError(f"{path}: cannot copy into {self.root} ({exc.strerror})") from None
        return Descriptor(media_type, digest, size, dict(annotations or {}))

    def _open_blob(self, digest: str) -> Any:
        try:
            return self._blob_path(digest).open("rb")
        except FileNotFoundError:
            raise LocalNotFoundError(f"{self.root}: blob {digest} not found") from None

    def _read_verified(self, digest: str, cap: int, what: str) -> bytes:
        """Read at most ``cap`` bytes of a blob and check them against ``digest``."""
        with self._open_blob(digest) as f:
            data: bytes = f.read(cap + 1)
        if len(data) > cap:
            raise UsageError(f"{self.root}: {what} {digest} exceeds the {cap}-byte limit")
        actual = sha256_digest(data)
        if actual != digest:
            raise IntegrityError(f"{self.root}: {what} {digest}: digest mismatch, found {actual}")
        return data

    def fetch_blob(self, digest: str, max_bytes: int = DEFAULT_MAX_BLOB_BYTES) -> bytes:
        return self._read_verified(digest, max_bytes, "blob")

    def fetch_blob_to_file(self, digest: str, dest: Path) -> None:
        dest = Path(dest)
        h = hashlib.sha256()
        fd, tmp = tempfile.mkstemp(prefix=".acx-blob-", dir=dest.parent)
        try:
            with self._open_blob(digest) as src, os.fdopen(fd, "wb") as out:
                while chunk := src.read(CHUNK):
                    h.update(chunk)
                    out.write(chunk)
            if "sha256:" + h.hexdigest() != digest:
                raise IntegrityError(f"{self.root}: blob {digest}: digest mismatch, found sha256:{h.hexdigest()}")
            os.replace(tmp, dest)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise

    # ------------------------------------------------------------------ manifests

    def push_manifest(self, raw: bytes, media_type: str, tag: str | None = None) -> Descriptor:
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
        raw, media_type, _ = self.fetch_manifest_raw(check_digest(digest))
        self._update_index(Descriptor(media_type, digest, len(raw)), tag)

    def list_tags(self) -> list[str]:
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
        """Scan the manifests index.json lists for a matching ``subject`` (any tool's referrers count)."""
        check_digest(subject_digest, "subject digest")
        if not (self.root / "index.json").exists():
            return ReferrerListing([], "scan", False)
        found: list[Descriptor] = []
        seen: set[str] = set()
        for e in self._read_index():
            digest = str(e["digest"])
            if digest in seen or e.get("mediaType") not in _MANIFEST_TYPES:
                continue
            seen.add(digest)
            if digest not in self._subjects:
                self._subjects[digest] = self._referrer_info(digest)
            subject, desc = self._subjects[digest]
            if subject == subject_digest and desc is not None:
                found.append(desc)
        return ReferrerListing(filter_artifact_type(found, artifact_type), "scan", False)

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
