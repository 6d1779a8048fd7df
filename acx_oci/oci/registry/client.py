"""A repository in an OCI registry, spoken to over the Distribution HTTP API.

We own the bytes: manifests go up and come back exactly as given, every read is
checked against the digest that names it, blobs stream through a hash, and
every request has explicit timeouts and a bounded number of retries. Auth
(docker ``config.json``, credential helpers, bearer-token challenges) is done
here on one keep-alive ``requests.Session`` rather than through oras-py: its
auth object keeps one token per client, ignores ``DOCKER_CONFIG``, has no
timeouts on token requests and logs instead of raising, and its transport
re-serializes manifests and retries for minutes when a registry is down.
"""

from __future__ import annotations

import contextlib
import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Self
from urllib.parse import urljoin

import requests
from requests.adapters import BaseAdapter

from acx_oci.crypto import StreamDigest, check_digest, sha256_digest
from acx_oci.errors import ConnectionLost, IntegrityError, RegistryError, UsageError
from acx_oci.jsonio import loads
from acx_oci.oci.model import (
    EMPTY_DIGEST,
    EMPTY_JSON,
    MANIFEST_ACCEPT,
    MAX_MANIFEST_BYTES,
    MEDIA_EMPTY,
    Descriptor,
    Manifest,
    check_manifest_size,
    media_type_of,
    parse_manifest,
)
from acx_oci.oci.ref import Reference
from acx_oci.oci.referrers import DEFAULT_MAX_REFERRERS, DEFAULT_MAX_TAGS_SCANNED, next_link, scan_own_tags
from acx_oci.oci.registry import referrers as _referrers
from acx_oci.oci.registry.auth import RegistryAuth
from acx_oci.oci.registry.referrers import FallbackScan
from acx_oci.oci.registry.transport import CHUNK, RETRY_STATUS, Transport, is_loopback, wants_tls
from acx_oci.oci.store import (
    DEFAULT_MAX_BLOB_BYTES,
    DEFAULT_MAX_FILE_BYTES,
    ManifestReads,
    ReferrerListing,
    StoreOptions,
    blob_limit,
    check_received,
    read_verified,
)
from acx_oci.timeutil import current_deadline

MAX_TAGS_LISTED = 100_000
TAGS_PAGE = 1000
MAX_TAG_PAGES = 1000  # pages of a tag listing followed (a Link loop of tiny pages ends here)
MANIFEST_PUT_RACE_RETRIES = 4


class RegistryStore(ManifestReads):
    """A repository in an OCI registry (``HOST[:PORT]/REPO``).

    ``fallback_scan`` adds referrers on registries without the Referrers API
    (by default acx's own ``acx-att-`` tags, see ``acx_oci.oci.referrers.scan_own_tags``);
    None lists the tag-schema index alone. ``adapter`` replaces the HTTP transport
    (requests' analogue of httpx's ``transport=``; default :func:`~acx_oci.oci.registry.transport.default_adapter`):
    a caller can observe or route every request, token requests included. Close the
    store (or use ``with``) to release its connection pool.
    """

    def __init__(self, reference: Reference, options: StoreOptions | None = None, *,
                 fallback_scan: FallbackScan | None = scan_own_tags, adapter: BaseAdapter | None = None) -> None:
        if reference.kind != "registry":
            raise UsageError(f"{reference}: not a registry reference")
        self.reference = reference
        self.options = options or StoreOptions()
        host, repo = reference.host, reference.repository
        if host in ("docker.io", "index.docker.io"):
            host = "registry-1.docker.io"
            if "/" not in repo:
                repo = "library/" + repo
        self.host = host
        self.repository = repo
        scheme = "http" if self.options.plain_http or (is_loopback(host) and not wants_tls(host, self.options)) \
            else "https"
        self.base = f"{scheme}://{host}/v2/{repo}/"
        self.transport = Transport(host, self.options, RegistryAuth(host, reference.host), adapter=adapter)
        self.fallback_scan = fallback_scan
        self._known_blobs: set[str] = set()
        # the last fallback index parsed, by digest: one resolve lists it for attestations and attempt records
        self.parsed_index: tuple[str, tuple[Descriptor, ...]] | None = None
        self.max_tags_scanned = DEFAULT_MAX_TAGS_SCANNED
        self.max_referrers = DEFAULT_MAX_REFERRERS

    def close(self) -> None:
        """Close the HTTP session and its pooled connections (a later request would open new ones)."""
        self.transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ blobs

    def _blob_url(self, digest: str) -> str:
        return f"{self.base}blobs/{check_digest(digest, 'blob digest')}"

    def blob_exists(self, digest: str) -> bool:
        """HEAD the blob once; a digest seen present is remembered for this store, so pushes skip repeat checks."""
        if digest in self._known_blobs:
            return True
        resp = self.transport.request("HEAD", self._blob_url(digest))
        resp.close()
        if resp.status_code == 200:
            self._known_blobs.add(digest)
            return True
        if resp.status_code == 404:
            return False
        raise self.transport.fail(resp, f"HEAD blob {digest}")

    def _upload(self, digest: str, size: int, body: bytes | Callable[[], IO[bytes]]) -> None:
        """Upload a blob, starting a fresh upload session on each retry.

        A connection lost mid-PUT or a 5xx leaves the registry's session in an
        unknown state (Distribution answers a second PUT to it with
        BLOB_UPLOAD_UNKNOWN), so a retry starts again from POST, after a bounded,
        jittered backoff and only while the deadline leaves time. Nothing refers
        to the blob until every blob is in and the manifest goes up, last.
        """
        attempts = max(0, self.options.retries)
        attempt = 0
        while True:
            failure = self._upload_once(digest, size, body)
            if failure is None:
                return  # not yet "known": the check before the manifest goes up asks the registry (HEAD)
            if attempt >= attempts or not self.transport.backoff(attempt + 1, current_deadline()):
                raise failure
            attempt += 1

    def _upload_once(self, digest: str, size: int, body: bytes | Callable[[], IO[bytes]]) -> RegistryError | None:
        """One monolithic upload (POST a session, PUT the bytes with ``?digest=``); a retryable failure is
        returned, any other raised."""
        t = self.transport
        resp = t.request("POST", f"{self.base}blobs/uploads/", headers={"Content-Length": "0"})
        if resp.status_code != 202:
            raise t.fail(resp, "start blob upload")
        resp.close()
        location = resp.headers.get("Location")
        if not location:
            raise RegistryError(f"registry {self.host}: blob upload answered without a Location")
        url = urljoin(resp.url, location)
        try:
            resp = t.request(
                "PUT", url, params={"digest": digest}, body=body, size=size, retry=False,
                headers={"Content-Type": "application/octet-stream", "Content-Length": str(size)},
            )
        except ConnectionLost as exc:
            return exc
        if resp.status_code not in (201, 204):
            err, code = t.failure(resp, f"upload blob {digest}")
            if resp.status_code in RETRY_STATUS or code == "BLOB_UPLOAD_UNKNOWN":
                return err if isinstance(err, RegistryError) else RegistryError(str(err))
            raise err
        resp.close()
        echoed = resp.headers.get("Docker-Content-Digest")
        if echoed and echoed != digest:
            raise IntegrityError(f"registry {self.host}: stored blob as {echoed}, expected {digest}")
        return None

    def push_blob(self, data: bytes, media_type: str, annotations: dict[str, str] | None = None) -> Descriptor:
        """Upload the bytes unless the registry already has the blob."""
        desc = Descriptor.for_bytes(media_type, data, annotations)
        if not self.blob_exists(desc.digest):
            self._upload(desc.digest, len(data), data)
        return desc

    def push_blob_file(self, path: Path, media_type: str, annotations: dict[str, str] | None = None) -> Descriptor:
        """Hash the file first, then upload it streamed unless the registry already has the blob."""
        path = Path(path)
        seen = StreamDigest()
        try:
            with path.open("rb") as f:
                while chunk := f.read(CHUNK):
                    seen.update(chunk)
        except OSError as exc:
            raise UsageError(f"{path}: cannot read ({exc.strerror})") from None
        if not self.blob_exists(seen.digest):
            self._upload(seen.digest, seen.size, lambda: path.open("rb"))
        return Descriptor(media_type, seen.digest, seen.size, dict(annotations or {}))

    def _get_blob(self, digest: str, size: int = 0) -> requests.Response:
        resp = self.transport.request("GET", self._blob_url(digest), size=size)
        if resp.status_code != 200:
            raise self.transport.fail(resp, f"GET blob {digest}")
        return resp

    def _open_limited(self, digest: str, size: int | None, max_bytes: int) -> tuple[requests.Response, int]:
        """GET a blob and the most bytes it may have; a Content-Length over that is refused before reading."""
        limit = blob_limit(digest, size, max_bytes)
        resp = self._get_blob(digest, size or 0)
        declared = resp.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            resp.close()
            check_received(digest, int(declared), size, limit)
        return resp, limit

    def fetch_blob(self, digest: str, max_bytes: int = DEFAULT_MAX_BLOB_BYTES, size: int | None = None) -> bytes:
        """GET a blob, stopping the moment it passes ``size`` or ``max_bytes``; the digest is verified."""
        resp, limit = self._open_limited(digest, size, max_bytes)
        buf = bytearray()
        try:
            read_verified(self.transport.chunks(resp, f"GET blob {digest}"), digest, size, limit, buf.extend,
                          f"blob {digest} from {self.host}")
        finally:
            resp.close()
        return bytes(buf)

    def fetch_blob_to_file(self, digest: str, dest: Path, size: int | None = None,
                           max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> None:
        """Stream to a temporary next to ``dest``; never more than promised is written, nothing is left on failure
        (a signal that raises, as the CLI's SIGTERM handler does, is a failure too)."""
        dest = Path(dest)
        resp, limit = self._open_limited(digest, size, max_bytes)
        fd, tmp = tempfile.mkstemp(prefix=".acx-blob-", dir=dest.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                read_verified(self.transport.chunks(resp, f"GET blob {digest}"), digest, size, limit, out.write,
                              f"blob {digest} from {self.host}")
            os.replace(tmp, dest)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        finally:
            resp.close()

    # ------------------------------------------------------------------ manifests

    def _named(self, target: str) -> str:
        """``REPO:TAG`` or ``REPO@DIGEST``: an error names the repository too (a typo in it reads as a 404)."""
        return f"{self.repository}{'@' if ':' in target else ':'}{target}"

    def _manifest_url(self, target: str) -> str:
        if ":" in target:
            check_digest(target, "manifest digest")
        return f"{self.base}manifests/{target}"

    def put_manifest(self, raw: bytes, media_type: str, target: str) -> requests.Response:
        """PUT exact manifest bytes under ``target`` (digest or tag); the response, closed."""
        check_manifest_size(raw, "manifest")
        for attempt in range(MANIFEST_PUT_RACE_RETRIES + 1):
            resp = self.transport.request("PUT", self._manifest_url(target), body=raw,
                                          headers={"Content-Type": media_type})
            if resp.status_code in (200, 201, 202):
                break
            err, code = self.transport.failure(resp, f"PUT manifest {target}")
            # CNCF Distribution 2.8 reads a blob's link file while a concurrent upload of the same
            # blob rewrites it, and reports DIGEST_INVALID for a manifest that is fine. Our bytes
            # hash to ``target`` (checked below), so that answer is the registry's race: retry.
            if resp.status_code != 400 or code != "DIGEST_INVALID" or attempt == MANIFEST_PUT_RACE_RETRIES:
                raise err
            time.sleep(random.uniform(0.05, 0.2) * (attempt + 1))
        resp.close()
        digest = sha256_digest(raw)
        echoed = resp.headers.get("Docker-Content-Digest")
        if echoed and echoed != digest:
            raise IntegrityError(f"registry {self.host}: stored manifest as {echoed}, expected {digest}")
        return resp

    def ensure_config_blob(self, raw: bytes) -> None:
        """Before a manifest goes up: upload ``{}`` if its config is the empty descriptor, and check that
        every blob it names is in the registry (uploaded by us, or found by HEAD).

        Manifest last, after its blobs are verified, so a push cut short never leaves a visible manifest
        whose blobs are missing (not every registry checks this itself; Distribution does).
        """
        try:
            doc = loads(raw, "manifest", ijson=False)
        except (ValueError, UnicodeDecodeError):
            return
        if not isinstance(doc, dict):
            return
        cfg = doc.get("config")
        if isinstance(cfg, dict) and cfg.get("digest") == EMPTY_DIGEST:
            self.push_blob(EMPTY_JSON, MEDIA_EMPTY)
        named = [cfg] if isinstance(cfg, dict) else []
        named += [ly for ly in doc.get("layers") or [] if isinstance(ly, dict)]
        for d in named:
            digest = d.get("digest")
            if isinstance(digest, str) and not self.blob_exists(digest):
                raise RegistryError(f"registry {self.host}: refusing to push a manifest whose blob {digest} "
                                    "is not in the registry")

    def push_manifest(self, raw: bytes, media_type: str, tag: str | None = None) -> Descriptor:
        """PUT exact bytes by digest (or under ``tag``), after making sure the config blob exists."""
        check_manifest_size(raw, "manifest")
        self.ensure_config_blob(raw)
        digest = sha256_digest(raw)
        self.put_manifest(raw, media_type, tag or digest)
        return Descriptor(media_type, digest, len(raw))

    def fetch_manifest_raw(self, target: str) -> tuple[bytes, str, str]:
        """GET a manifest under the size cap and check its bytes against the digest asked for or announced."""
        raw, content_type, digest = self._get_manifest(target)
        return raw, media_type_of(raw, content_type), digest

    def fetch_manifest(self, target: str) -> Manifest:
        """:meth:`fetch_manifest_raw`, parsed once (its media type would be a second parse of the bytes)."""
        raw, _, _ = self._get_manifest(target)
        return parse_manifest(raw, f"manifest {self._named(target)}")

    def _get_manifest(self, target: str) -> tuple[bytes, str, str]:
        """(verified bytes, the Content-Type the registry sent, digest) of a manifest by tag or digest."""
        t = self.transport
        resp = t.request("GET", self._manifest_url(target), headers={"Accept": MANIFEST_ACCEPT})
        if resp.status_code != 200:
            raise t.fail(resp, f"GET manifest {self._named(target)}")
        declared = resp.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > MAX_MANIFEST_BYTES:
            resp.close()
            raise RegistryError(f"registry {self.host}: manifest {target} is {declared} bytes, "
                                f"over the {MAX_MANIFEST_BYTES}-byte limit")
        content_type = resp.headers.get("Content-Type", "").split(";", 1)[0].strip()
        header_digest = resp.headers.get("Docker-Content-Digest")
        raw = t.read_capped(resp, MAX_MANIFEST_BYTES, f"manifest {target}")
        digest = sha256_digest(raw)
        expected = target if target.startswith("sha256:") else header_digest
        if expected and expected != digest:
            raise IntegrityError(f"manifest {target} from {self.host}: digest mismatch, expected {expected}, "
                                 f"found {digest}")
        return raw, content_type, digest

    # ------------------------------------------------------------------ tags

    def tag(self, digest: str, tag: str) -> None:
        """Tag an existing manifest by PUTting its exact bytes again under ``tag``."""
        raw, media_type, _ = self.fetch_manifest_raw(check_digest(digest))
        self.put_manifest(raw, media_type, tag)

    def list_tags_bounded(self, limit: int) -> tuple[list[str], bool]:
        """Tags, following ``Link`` pages, at most ``limit``; (tags, truncated).

        A full page without ``Link`` (go-containerregistry honours ``n`` but sends none) is
        followed by ``?n=&last=<last tag>``, as the distribution spec describes. A page longer
        than ``n`` (Debian's Distribution ignores ``n`` and ``last`` and sends every tag, unsorted)
        is the whole listing. A page of nothing but tags already read ends it *truncated*: the registry
        ignored ``last``, and whatever it did not show cannot be reached (with exactly ``n`` tags on a
        registry that ignores both, the listing is complete but reported cut: the safe side).
        """
        t = self.transport
        url: str | None = f"{self.base}tags/list"
        params: dict[str, str] | None = {"n": str(TAGS_PAGE)}
        tags: list[str] = []
        pages = 0
        visited: set[str] = set()
        seen: set[str] = set()
        read = 0
        while url is not None:
            resp = t.request("GET", url, params=params)
            if resp.status_code == 404:
                resp.close()
                return tags, False
            if resp.status_code != 200:
                raise t.fail(resp, "list tags")
            link = next_link(resp.headers.get("Link"))
            body = t.read_capped(resp, 16 * 1024 * 1024, "tag list")
            try:
                page = loads(body, "tag list", ijson=False).get("tags") or []
            except (ValueError, AttributeError):
                raise RegistryError(f"registry {self.host}: tag list is not JSON") from None
            if not isinstance(page, list):
                raise RegistryError(f"registry {self.host}: tag list: expected tags to be an array")
            page = [x for x in page if isinstance(x, str)]
            fresh = [x for x in dict.fromkeys(page) if x not in seen]
            read += len(page)
            if page and not fresh:  # the registry ignored ``last``: what it has not shown cannot be reached
                return tags[:limit], True
            seen.update(fresh)
            tags += fresh
            pages += 1
            if len(tags) >= limit or read >= limit or (pages >= MAX_TAG_PAGES and (link or len(page) >= TAGS_PAGE)):
                return tags[:limit], True  # (``read``: pages of mostly repeated tags count against the bound too)
            if link and not page:
                break  # an empty page that links on (to itself, say): nothing more is coming
            visited.add(resp.url)
            if link and urljoin(resp.url, link) in visited:
                return tags[:limit], True  # a Link back to a page already read: a loop
            if link:
                url, params = urljoin(resp.url, link), None
            elif len(page) == TAGS_PAGE and params is not None:  # a longer page ignored ``n``: it is all
                url, params = f"{self.base}tags/list", {"n": str(TAGS_PAGE), "last": page[-1]}
            else:
                url = None
        return tags, False

    def list_tags(self) -> list[str]:
        """Every tag up to the listing cap; ``list_tags_bounded`` also says whether it was cut."""
        return self.list_tags_bounded(MAX_TAGS_LISTED)[0]

    # ------------------------------------------------------------------ referrers

    def read_referrers_index(self, subject_digest: str) -> list[Descriptor]:
        """Entries of the ``sha256-<hex>`` fallback index (empty if it does not exist)."""
        return _referrers.read_index(self, subject_digest)

    def write_referrers_index(self, subject_digest: str, entries: list[Descriptor]) -> list[Descriptor]:
        """Merge ``entries`` into the fallback index (see ``registry.referrers.write_index``)."""
        return _referrers.write_index(self, subject_digest, entries)

    def push_referrer(self, raw: bytes, subject_digest: str, tag: str | None = None) -> Descriptor:
        """Push a referrer and keep discovery current (the fallback tag index when the API is missing)."""
        return _referrers.push_referrer(self, raw, subject_digest, tag)

    def referrers(self, subject_digest: str, artifact_type: str | None = None) -> ReferrerListing:
        """Referrers from the API when the registry has it; else the fallback index plus ``fallback_scan``."""
        return _referrers.list_referrers(self, subject_digest, artifact_type, self.fallback_scan)
