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

import base64
import contextlib
import hashlib
import ipaddress
import json
import os
import random
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import urljoin

import requests
from requests.adapters import HTTPAdapter

from acx_oci.crypto.digest import check_digest, sha256_digest
from acx_oci.errors import AcxError, IntegrityError, NotFoundError, RegistryError, UsageError
from acx_oci.oci.model import (
    EMPTY_DIGEST,
    EMPTY_JSON,
    MANIFEST_ACCEPT,
    MAX_MANIFEST_BYTES,
    MEDIA_EMPTY,
    MEDIA_INDEX,
    Descriptor,
    build_index,
    media_type_of,
    parse_index,
    parse_manifest,
)
from acx_oci.oci.ref import Reference
from acx_oci.oci.referrers import (
    DEFAULT_MAX_REFERRERS,
    DEFAULT_MAX_TAGS_SCANNED,
    REFERRER_TAG_PREFIX,
    descriptor_for_referrer,
    fallback_tag,
    filter_artifact_type,
    merge_descriptors,
    next_link,
    parse_own_tag,
)
from acx_oci.oci.store import DEFAULT_MAX_BLOB_BYTES, ManifestReads, StoreOptions

CHUNK = 1024 * 1024
POOL_SIZE = 32
FETCH_THREADS = 8
MAX_API_PAGES = 100
MAX_TAGS_LISTED = 100_000
INDEX_WRITE_ATTEMPTS = 10
_ERROR_BODY_CAP = 64 * 1024
_RETRY_STATUS = frozenset({500, 502, 503, 504})
_UNSUPPORTED_REFERRERS_STATUS = frozenset({404, 405, 406, 501})

# Referrers API support per registry host, learned once per process.
_API_SUPPORT: dict[str, bool] = {}
# Own tags are content-named (acx-att-<hex prefix of the digest>), so what a tag
# pointed to can be remembered: (host, repo, tag) -> (digest, subject, descriptor).
_TAG_CACHE: dict[tuple[str, str, str], tuple[str, str | None, Descriptor]] = {}
_TAG_CACHE_MAX = 200_000
_CACHE_LOCK = threading.Lock()


MANIFEST_PUT_RACE_RETRIES = 4


def _host_only(host: str) -> str:
    """Strip the port (and IPv6 brackets) from ``HOST[:PORT]``."""
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:
        return host.rsplit(":", 1)[0]
    return host


def is_loopback(host: str) -> bool:
    """True for localhost, 127.0.0.0/8 and ::1 (those get plain HTTP automatically)."""
    name = _host_only(host).lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _docker_config_path() -> Path:
    env = os.environ.get("DOCKER_CONFIG")
    base = Path(env) if env else Path.home() / ".docker"
    return base / "config.json"


def _config_keys(host: str) -> list[str]:
    """The spellings docker ``config.json`` uses for a registry host."""
    names = [host]
    if "localhost" in host:
        names.append(host.replace("localhost", "127.0.0.1"))
    elif "127.0.0.1" in host:
        names.append(host.replace("127.0.0.1", "localhost"))
    if host in ("docker.io", "registry-1.docker.io", "index.docker.io"):
        names = ["https://index.docker.io/v1/", "index.docker.io", "docker.io", "registry-1.docker.io"]
    out: list[str] = []
    for n in names:
        out += [n, f"https://{n}", f"http://{n}", f"https://{n}/v1/", f"https://{n}/v2/"]
    return out


@dataclass(frozen=True)
class Credentials:
    """Basic credentials, or an identity (refresh) token from a credential helper."""

    username: str = ""
    password: str = ""
    identity_token: str = ""

    def basic(self) -> str:
        return base64.b64encode(f"{self.username}:{self.password}".encode()).decode("ascii")


def _run_helper(helper: str, server: str) -> Credentials | None:
    binary = f"docker-credential-{helper}"
    try:
        proc = subprocess.run(
            [binary, "get"], input=server.encode(), capture_output=True, timeout=15, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RegistryError(f"credential helper {binary} failed: {exc.__class__.__name__}") from None
    if proc.returncode != 0:
        return None  # helpers exit non-zero for "credentials not found"
    try:
        doc = json.loads(proc.stdout)
        user, secret = str(doc.get("Username", "")), str(doc.get("Secret", ""))
    except (ValueError, AttributeError):
        raise RegistryError(f"credential helper {binary} printed something other than JSON") from None
    if user == "<token>":
        return Credentials(identity_token=secret)
    return Credentials(user, secret)


def load_credentials(host: str) -> Credentials | None:
    """Credentials for ``host`` from docker ``config.json`` (``auths``, ``credHelpers``, ``credsStore``)."""
    path = _docker_config_path()
    try:
        cfg = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read docker config ({exc.__class__.__name__})") from None
    if not isinstance(cfg, dict):
        raise UsageError(f"{path}: expected a JSON object")
    keys = _config_keys(host)
    helpers = cfg.get("credHelpers") or {}
    if isinstance(helpers, dict):
        for k in keys:
            if isinstance(helpers.get(k), str):
                return _run_helper(helpers[k], k)
    auths = cfg.get("auths") or {}
    if isinstance(auths, dict):
        for k in keys:
            entry = auths.get(k)
            if not isinstance(entry, dict):
                continue
            if isinstance(entry.get("identitytoken"), str) and entry["identitytoken"]:
                return Credentials(identity_token=entry["identitytoken"])
            if isinstance(entry.get("auth"), str) and entry["auth"]:
                try:
                    user, _, pw = base64.b64decode(entry["auth"]).decode("utf-8").partition(":")
                except (ValueError, UnicodeDecodeError):
                    raise UsageError(f"{path}: auths[{k!r}].auth is not base64 of user:password") from None
                return Credentials(user, pw)
            if isinstance(entry.get("username"), str) and isinstance(entry.get("password"), str):
                return Credentials(entry["username"], entry["password"])
    store = cfg.get("credsStore")
    if isinstance(store, str) and store:
        return _run_helper(store, keys[0] if host not in ("docker.io",) else "https://index.docker.io/v1/")
    return None


_CHALLENGE_PARAM = re.compile(r'(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def parse_challenge(header: str) -> tuple[str, dict[str, str]]:
    """Split ``WWW-Authenticate`` into (scheme, params)."""
    scheme, _, rest = header.strip().partition(" ")
    params = {m.group(1).lower(): (m.group(2) if m.group(2) is not None else m.group(3)) for m in
              _CHALLENGE_PARAM.finditer(rest)}
    return scheme.lower(), params


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _connect_reason(exc: BaseException) -> str | None:
    """Why a connection could not be opened, or None if it broke after opening."""
    text = repr(exc)
    for needle, reason in (
        ("Connection refused", "connection refused"),
        ("NameResolutionError", "cannot resolve host"),
        ("Name or service not known", "cannot resolve host"),
        ("Temporary failure in name resolution", "cannot resolve host"),
        ("nodename nor servname", "cannot resolve host"),
        ("Network is unreachable", "network unreachable"),
        ("No route to host", "no route to host"),
        ("NewConnectionError", "cannot connect"),
    ):
        if needle in text:
            return reason
    return None


class RegistryStore(ManifestReads):
    """A repository in an OCI registry (``HOST[:PORT]/REPO``)."""

    def __init__(self, reference: Reference, options: StoreOptions | None = None) -> None:
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
        scheme = "http" if (self.options.plain_http or is_loopback(host)) else "https"
        self.base = f"{scheme}://{host}/v2/{repo}/"
        self._timeout = (min(self.options.timeout, 3.0), self.options.timeout)
        self._session = requests.Session()
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=POOL_SIZE, max_retries=0)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)
        self._session.verify = not self.options.insecure
        self._session.headers["User-Agent"] = "acx-oci"
        self._auth_lock = threading.Lock()
        self._auth_header: str | None = None
        self._credentials: Credentials | None = None
        self._credentials_loaded = False
        self._known_blobs: set[str] = set()
        self._last = threading.local()  # per thread: the gateway shares one store between threads
        self.max_tags_scanned = DEFAULT_MAX_TAGS_SCANNED
        self.max_referrers = DEFAULT_MAX_REFERRERS

    @property
    def last_referrers_source(self) -> str | None:
        """Which path the calling thread's last ``referrers()`` used: "api" or "fallback"."""
        value: str | None = getattr(self._last, "source", None)
        return value

    @last_referrers_source.setter
    def last_referrers_source(self, value: str | None) -> None:
        self._last.source = value

    @property
    def last_referrers_partial(self) -> bool:
        """Whether the calling thread's last ``referrers()`` hit a bound (tags scanned, pages, entries)."""
        return bool(getattr(self._last, "partial", False))

    @last_referrers_partial.setter
    def last_referrers_partial(self, value: bool) -> None:
        self._last.partial = value

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> RegistryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ transport

    def _request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
        body: bytes | Callable[[], IO[bytes]] | None = None,
        stream: bool = True,
    ) -> requests.Response:
        """Send with auth, explicit timeouts and bounded retries; map failures to RegistryError.

        Connection failures are not retried (an unreachable registry is reported
        within the connect timeout); 5xx and connections reset mid-request are,
        ``options.retries`` times with short jittered backoff.
        """
        attempts_left = max(0, self.options.retries)
        authed = False
        attempt = 0
        while True:
            hdrs = dict(headers or {})
            if self._auth_header and "Authorization" not in hdrs:
                hdrs["Authorization"] = self._auth_header
            handle: IO[bytes] | None = None
            data: Any = body
            if callable(body):
                handle = body()
                data = handle
            try:
                resp = self._session.request(
                    method, url, headers=hdrs, params=params, data=data, stream=stream,
                    timeout=self._timeout, allow_redirects=True,
                )
            except requests.exceptions.ConnectTimeout:
                raise RegistryError(
                    f"registry {self.host} unreachable: connect timed out after {self._timeout[0]:g}s"
                ) from None
            except requests.exceptions.SSLError as exc:
                raise RegistryError(
                    f"registry {self.host}: TLS error ({_one_line(str(exc.__class__.__name__))}); "
                    "use --insecure to skip verification or --plain-http for HTTP"
                ) from None
            except requests.exceptions.ReadTimeout:
                raise RegistryError(
                    f"registry {self.host}: no response within {self._timeout[1]:g}s ({method} {self._path(url)})"
                ) from None
            except requests.exceptions.ConnectionError as exc:
                reason = _connect_reason(exc)
                if reason is not None:
                    raise RegistryError(f"registry {self.host} unreachable: {reason}") from None
                if attempt < attempts_left:
                    attempt += 1
                    self._backoff(attempt)
                    continue
                raise RegistryError(
                    f"registry {self.host}: connection lost during {method} {self._path(url)}"
                ) from None
            except requests.exceptions.RequestException as exc:
                raise RegistryError(f"registry {self.host}: {exc.__class__.__name__} during {method}") from None
            finally:
                if handle is not None:
                    handle.close()
            if resp.status_code == 401 and not authed:
                authed = True
                challenge = resp.headers.get("WWW-Authenticate", "")
                resp.close()
                self._authenticate(challenge)
                continue
            if resp.status_code in _RETRY_STATUS and attempt < attempts_left:
                resp.close()
                attempt += 1
                self._backoff(attempt)
                continue
            return resp

    @staticmethod
    def _backoff(attempt: int) -> None:
        time.sleep(min(2.0, 0.1 * 2**attempt) * random.uniform(0.5, 1.0))

    def _path(self, url: str) -> str:
        return url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0][:120]

    def _fail(self, resp: requests.Response, what: str) -> AcxError:
        """One-line error from a non-success response, with the registry's code and message."""
        try:
            body = self._read_capped(resp, _ERROR_BODY_CAP, what, truncate=True)
        except AcxError:
            body = b""
        detail = ""
        try:
            doc = json.loads(body)
            errs = doc.get("errors") if isinstance(doc, dict) else None
            if isinstance(errs, list) and errs and isinstance(errs[0], dict):
                detail = " ".join(str(errs[0].get(k, "")) for k in ("code", "message")).strip()
        except ValueError:
            detail = _one_line(body.decode("utf-8", "replace"), 120)
        msg = f"registry {self.host}: {what}: HTTP {resp.status_code}" + (f" {_one_line(detail)}" if detail else "")
        if resp.status_code == 404:
            return NotFoundError(msg)
        if resp.status_code in (401, 403):
            hint = "" if self._credentials else f" (no credentials for {self.host} in {_docker_config_path()})"
            return RegistryError(msg + hint)
        return RegistryError(msg)

    def _read_capped(self, resp: requests.Response, cap: int, what: str, truncate: bool = False) -> bytes:
        """Read a body, refusing (or truncating) past ``cap`` bytes; Content-Length is not trusted."""
        buf = bytearray()
        try:
            for chunk in resp.iter_content(65536):
                buf += chunk
                if len(buf) > cap:
                    if truncate:
                        return bytes(buf[:cap])
                    raise RegistryError(f"registry {self.host}: {what}: response exceeds the {cap}-byte limit")
        except requests.exceptions.RequestException as exc:
            raise RegistryError(f"registry {self.host}: {what}: connection failed while reading "
                                f"({exc.__class__.__name__})") from None
        finally:
            resp.close()
        return bytes(buf)

    # ------------------------------------------------------------------ auth

    def _creds(self) -> Credentials | None:
        if not self._credentials_loaded:
            self._credentials = load_credentials(self.reference.host)
            self._credentials_loaded = True
        return self._credentials

    def _authenticate(self, challenge: str) -> None:
        """Answer a 401 challenge: Basic from docker config, or a Bearer token from the realm."""
        scheme, params = parse_challenge(challenge)
        with self._auth_lock:
            creds = self._creds()
            if scheme == "basic":
                if creds is None or not creds.username:
                    raise RegistryError(
                        f"registry {self.host}: authentication required; no credentials for it in "
                        f"{_docker_config_path()} (docker login {self.reference.host})"
                    )
                self._auth_header = "Basic " + creds.basic()
                return
            if scheme != "bearer" or not params.get("realm"):
                raise RegistryError(f"registry {self.host}: unsupported authentication challenge {scheme!r}")
            self._auth_header = "Bearer " + self._fetch_token(params, creds)

    def _fetch_token(self, params: dict[str, str], creds: Credentials | None) -> str:
        realm = params["realm"]
        query = {k: params[k] for k in ("service", "scope") if params.get(k)}
        try:
            if creds is not None and creds.identity_token:
                form = dict(query, grant_type="refresh_token", refresh_token=creds.identity_token,
                            client_id="acx-oci")
                resp = self._session.post(realm, data=form, timeout=self._timeout)
            else:
                headers = {"Authorization": "Basic " + creds.basic()} if creds and creds.username else {}
                resp = self._session.get(realm, params=query, headers=headers, timeout=self._timeout)
        except requests.exceptions.RequestException as exc:
            raise RegistryError(f"registry {self.host}: token service {realm} failed ({exc.__class__.__name__})") \
                from None
        if resp.status_code != 200:
            raise RegistryError(f"registry {self.host}: token service answered HTTP {resp.status_code}"
                                + ("" if creds else " (no credentials configured)"))
        try:
            doc = resp.json()
            token = doc.get("token") or doc.get("access_token")
        except (ValueError, AttributeError):
            token = None
        if not isinstance(token, str) or not token:
            raise RegistryError(f"registry {self.host}: token service sent no token")
        return token

    # ------------------------------------------------------------------ blobs

    def _blob_url(self, digest: str) -> str:
        return f"{self.base}blobs/{check_digest(digest, 'blob digest')}"

    def blob_exists(self, digest: str) -> bool:
        if digest in self._known_blobs:
            return True
        resp = self._request("HEAD", self._blob_url(digest))
        resp.close()
        if resp.status_code == 200:
            self._known_blobs.add(digest)
            return True
        if resp.status_code == 404:
            return False
        raise self._fail(resp, f"HEAD blob {digest}")

    def _upload(self, digest: str, size: int, body: bytes | Callable[[], IO[bytes]]) -> None:
        """Monolithic upload: POST to open a session, PUT the bytes with ``?digest=``."""
        resp = self._request("POST", f"{self.base}blobs/uploads/", headers={"Content-Length": "0"})
        if resp.status_code != 202:
            raise self._fail(resp, "start blob upload")
        resp.close()
        location = resp.headers.get("Location")
        if not location:
            raise RegistryError(f"registry {self.host}: blob upload answered without a Location")
        url = urljoin(resp.url, location)
        resp = self._request(
            "PUT", url, params={"digest": digest}, body=body,
            headers={"Content-Type": "application/octet-stream", "Content-Length": str(size)},
        )
        if resp.status_code not in (201, 204):
            raise self._fail(resp, f"upload blob {digest}")
        resp.close()
        echoed = resp.headers.get("Docker-Content-Digest")
        if echoed and echoed != digest:
            raise IntegrityError(f"registry {self.host}: stored blob as {echoed}, expected {digest}")
        self._known_blobs.add(digest)

    def push_blob(self, data: bytes, media_type: str, annotations: dict[str, str] | None = None) -> Descriptor:
        desc = Descriptor.for_bytes(media_type, data, annotations)
        if not self.blob_exists(desc.digest):
            self._upload(desc.digest, len(data), data)
        return desc

    def push_blob_file(self, path: Path, media_type: str, annotations: dict[str, str] | None = None) -> Descriptor:
        path = Path(path)
        h = hashlib.sha256()
        size = 0
        try:
            with path.open("rb") as f:
                while chunk := f.read(CHUNK):
                    h.update(chunk)
                    size += len(chunk)
        except OSError as exc:
            raise UsageError(f"{path}: cannot read ({exc.strerror})") from None
        digest = "sha256:" + h.hexdigest()
        if not self.blob_exists(digest):
            self._upload(digest, size, lambda: path.open("rb"))
        return Descriptor(media_type, digest, size, dict(annotations or {}))

    def _get_blob(self, digest: str) -> requests.Response:
        resp = self._request("GET", self._blob_url(digest))
        if resp.status_code != 200:
            raise self._fail(resp, f"GET blob {digest}")
        return resp

    def _chunks(self, resp: requests.Response, what: str) -> Iterator[bytes]:
        try:
            yield from resp.iter_content(CHUNK)
        except requests.exceptions.RequestException as exc:
            raise RegistryError(f"registry {self.host}: {what}: connection failed while reading "
                                f"({exc.__class__.__name__})") from None

    def fetch_blob(self, digest: str, max_bytes: int = DEFAULT_MAX_BLOB_BYTES) -> bytes:
        resp = self._get_blob(digest)
        declared = resp.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > max_bytes:
            resp.close()
            raise UsageError(f"blob {digest} is {declared} bytes, over the {max_bytes}-byte limit")
        buf = bytearray()
        h = hashlib.sha256()
        try:
            for chunk in self._chunks(resp, f"GET blob {digest}"):
                buf += chunk
                if len(buf) > max_bytes:
                    raise UsageError(f"blob {digest} exceeds the {max_bytes}-byte limit")
                h.update(chunk)
        finally:
            resp.close()
        if "sha256:" + h.hexdigest() != digest:
            raise IntegrityError(f"blob {digest} from {self.host}: digest mismatch, found sha256:{h.hexdigest()}")
        return bytes(buf)

    def fetch_blob_to_file(self, digest: str, dest: Path) -> None:
        dest = Path(dest)
        resp = self._get_blob(digest)
        h = hashlib.sha256()
        fd, tmp = tempfile.mkstemp(prefix=".acx-blob-", dir=dest.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                for chunk in self._chunks(resp, f"GET blob {digest}"):
                    h.update(chunk)
                    out.write(chunk)
            if "sha256:" + h.hexdigest() != digest:
                raise IntegrityError(
                    f"blob {digest} from {self.host}: digest mismatch, found sha256:{h.hexdigest()}"
                )
            os.replace(tmp, dest)
        except BaseException:
            resp.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        resp.close()

    # ------------------------------------------------------------------ manifests

    def _manifest_url(self, target: str) -> str:
        if ":" in target:
            check_digest(target, "manifest digest")
        return f"{self.base}manifests/{target}"

    def _put_manifest(self, raw: bytes, media_type: str, target: str) -> requests.Response:
        if len(raw) > MAX_MANIFEST_BYTES:
            raise UsageError(f"manifest is {len(raw)} bytes; registries refuse manifests over {MAX_MANIFEST_BYTES}")
        for attempt in range(MANIFEST_PUT_RACE_RETRIES + 1):
            resp = self._request("PUT", self._manifest_url(target), body=raw, headers={"Content-Type": media_type})
            if resp.status_code in (200, 201, 202):
                break
            err = self._fail(resp, f"PUT manifest {target}")
            # CNCF Distribution 2.8 reads a blob's link file while a concurrent upload of the same
            # blob rewrites it, and reports DIGEST_INVALID for a manifest that is fine. Our bytes
            # hash to ``target`` (checked below), so that answer is the registry's race: retry.
            if resp.status_code != 400 or "DIGEST_INVALID" not in str(err) or attempt == MANIFEST_PUT_RACE_RETRIES:
                raise err
            time.sleep(random.uniform(0.05, 0.2) * (attempt + 1))
        resp.close()
        digest = sha256_digest(raw)
        echoed = resp.headers.get("Docker-Content-Digest")
        if echoed and echoed != digest:
            raise IntegrityError(f"registry {self.host}: stored manifest as {echoed}, expected {digest}")
        return resp

    def _ensure_config_blob(self, raw: bytes) -> None:
        """A manifest whose config is the empty descriptor needs ``{}`` really uploaded."""
        try:
            doc = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return
        cfg = doc.get("config") if isinstance(doc, dict) else None
        if isinstance(cfg, dict) and cfg.get("digest") == EMPTY_DIGEST:
            self.push_blob(EMPTY_JSON, MEDIA_EMPTY)

    def push_manifest(self, raw: bytes, media_type: str, tag: str | None = None) -> Descriptor:
        if len(raw) > MAX_MANIFEST_BYTES:
            raise UsageError(f"manifest is {len(raw)} bytes; registries refuse manifests over {MAX_MANIFEST_BYTES}")
        self._ensure_config_blob(raw)
        digest = sha256_digest(raw)
        self._put_manifest(raw, media_type, tag or digest)
        return Descriptor(media_type, digest, len(raw))

    def fetch_manifest_raw(self, target: str) -> tuple[bytes, str, str]:
        resp = self._request("GET", self._manifest_url(target), headers={"Accept": MANIFEST_ACCEPT})
        if resp.status_code != 200:
            raise self._fail(resp, f"GET manifest {target}")
        declared = resp.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > MAX_MANIFEST_BYTES:
            resp.close()
            raise RegistryError(f"registry {self.host}: manifest {target} is {declared} bytes, "
                                f"over the {MAX_MANIFEST_BYTES}-byte limit")
        content_type = resp.headers.get("Content-Type", "").split(";", 1)[0].strip()
        header_digest = resp.headers.get("Docker-Content-Digest")
        raw = self._read_capped(resp, MAX_MANIFEST_BYTES, f"manifest {target}")
        digest = sha256_digest(raw)
        expected = target if target.startswith("sha256:") else header_digest
        if expected and expected != digest:
            raise IntegrityError(f"manifest {target} from {self.host}: digest mismatch, expected {expected}, "
                                 f"found {digest}")
        return raw, media_type_of(raw, content_type), digest

    def tag(self, digest: str, tag: str) -> None:
        raw, media_type, _ = self.fetch_manifest_raw(check_digest(digest))
        self._put_manifest(raw, media_type, tag)

    def _list_tags(self, limit: int) -> tuple[list[str], bool]:
        """Tags, following ``Link`` pages; (tags, truncated)."""
        url: str | None = f"{self.base}tags/list"
        params: dict[str, str] | None = {"n": "1000"}
        tags: list[str] = []
        while url is not None:
            resp = self._request("GET", url, params=params)
            if resp.status_code == 404:
                resp.close()
                return tags, False
            if resp.status_code != 200:
                raise self._fail(resp, "list tags")
            link = next_link(resp.headers.get("Link"))
            body = self._read_capped(resp, 16 * 1024 * 1024, "tag list")
            try:
                page = json.loads(body).get("tags") or []
            except (ValueError, AttributeError):
                raise RegistryError(f"registry {self.host}: tag list is not JSON") from None
            tags += [t for t in page if isinstance(t, str)]
            if len(tags) >= limit:
                return tags[:limit], True
            url = urljoin(resp.url, link) if link else None
            params = None
        return tags, False

    def list_tags(self) -> list[str]:
        return self._list_tags(MAX_TAGS_LISTED)[0]

    # ------------------------------------------------------------------ referrers

    def _referrers_api(self, subject_digest: str, artifact_type: str | None) -> list[Descriptor] | None:
        """Referrers via ``GET /v2/<name>/referrers/<digest>``; None when the registry lacks the API."""
        if _API_SUPPORT.get(self.host) is False:
            return None
        url: str | None = f"{self.base}referrers/{subject_digest}"
        params = {"artifactType": artifact_type} if artifact_type else None
        out: list[Descriptor] = []
        pages = 0
        while url is not None:
            resp = self._request("GET", url, params=params, headers={"Accept": MEDIA_INDEX})
            if resp.status_code in _UNSUPPORTED_REFERRERS_STATUS and pages == 0:
                resp.close()
                _API_SUPPORT[self.host] = False
                return None
            if resp.status_code != 200:
                raise self._fail(resp, f"GET referrers {subject_digest}")
            filtered = "artifacttype" in resp.headers.get("OCI-Filters-Applied", "").lower()
            link = next_link(resp.headers.get("Link"))
            body = self._read_capped(resp, MAX_MANIFEST_BYTES, "referrers response")
            try:
                entries = parse_index(body, "referrers response")
            except UsageError:
                if pages == 0:
                    _API_SUPPORT[self.host] = False
                    return None
                raise RegistryError(f"registry {self.host}: referrers page {pages + 1} is not an image index") \
                    from None
            _API_SUPPORT[self.host] = True
            out += entries if filtered else filter_artifact_type(entries, artifact_type)
            pages += 1
            if len(out) >= self.max_referrers or (link and pages >= MAX_API_PAGES):
                self.last_referrers_partial = True
                return out[: self.max_referrers]
            url = urljoin(resp.url, link) if link else None
            params = None
        return out

    def read_referrers_index(self, subject_digest: str) -> list[Descriptor]:
        """Entries of the ``sha256-<hex>`` fallback index (empty if it does not exist)."""
        try:
            raw, _, _ = self.fetch_manifest_raw(fallback_tag(subject_digest))
        except NotFoundError:
            return []
        return parse_index(raw, f"referrers index {fallback_tag(subject_digest)}")

    def write_referrers_index(self, subject_digest: str, entries: list[Descriptor]) -> list[Descriptor]:
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
            current = self.read_referrers_index(subject_digest)
            if want <= {d.digest for d in current}:
                stable += 1
                if not contention or stable >= 2:
                    return current
                time.sleep(random.uniform(0.05, 0.15))
                continue
            stable = 0
            merged = merge_descriptors(current, entries)
            self._put_manifest(build_index(merged), MEDIA_INDEX, tag)
            time.sleep(random.uniform(0.0, 0.02))
            current = self.read_referrers_index(subject_digest)
            seen = {d.digest for d in current}
            if seen != {d.digest for d in merged}:
                contention = True
            if want <= seen:
                stable = 1
                if not contention:
                    return current
            time.sleep(random.uniform(0.02, 0.08) * (1 + attempt % 3))
        return current

    def push_referrer(self, raw: bytes, subject_digest: str, tag: str | None = None) -> Descriptor:
        check_digest(subject_digest, "subject digest")
        manifest = parse_manifest(raw, "referrer manifest")
        if manifest.subject is None or manifest.subject.digest != subject_digest:
            raise UsageError(f"referrer manifest: subject must be {subject_digest}")
        self._ensure_config_blob(raw)
        resp = self._put_manifest(raw, manifest.media_type, manifest.digest)
        if tag:
            self._put_manifest(raw, manifest.media_type, tag)
        desc = descriptor_for_referrer(manifest)
        if resp.headers.get("OCI-Subject"):
            _API_SUPPORT[self.host] = True
            return desc
        if _API_SUPPORT.get(self.host) or self._referrers_api(subject_digest, None) is not None:
            return desc
        after = self.write_referrers_index(subject_digest, [desc])
        if desc.digest not in {d.digest for d in after} and not tag:
            raise RegistryError(f"registry {self.host}: could not record referrer {desc.digest} in "
                                f"{fallback_tag(subject_digest)} after {INDEX_WRITE_ATTEMPTS} attempts")
        return desc

    def _scan_own_tags(self, subject_digest: str, known: set[str]) -> list[Descriptor]:
        """Referrers of ``subject_digest`` found under ``acx-att-`` tags but missing from ``known``."""
        tags, truncated = self._list_tags(self.max_tags_scanned)
        if truncated:
            self.last_referrers_partial = True
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
                hit = _TAG_CACHE.get((self.host, self.repository, t))
            if hit is not None:
                if hit[1] == subject_digest and hit[0] not in known:
                    found.append(hit[2])
                continue
            todo.append(t)

        def load(t: str) -> tuple[str, str | None, Descriptor] | None:
            try:
                raw, _, digest = self.fetch_manifest_raw(t)
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
                    _TAG_CACHE[(self.host, self.repository, t)] = entry
            return entry

        if todo:
            with ThreadPoolExecutor(max_workers=FETCH_THREADS) as pool:
                for entry in pool.map(load, todo):
                    if entry is not None and entry[1] == subject_digest and entry[0] not in known:
                        found.append(entry[2])
        return merge_descriptors([], found)

    def referrers(self, subject_digest: str, artifact_type: str | None = None) -> list[Descriptor]:
        """Referrers from the API when the registry has it; else the fallback index plus own tags.

        With the API the registry indexes every manifest with a ``subject``
        itself (no read-merge-write to lose), so own tags are only scanned on
        the fallback path. ``last_referrers_source`` says which path was used;
        ``last_referrers_partial`` whether a bound was hit.
        """
        check_digest(subject_digest, "subject digest")
        self.last_referrers_partial = False
        api = self._referrers_api(subject_digest, artifact_type)
        if api is not None:
            self.last_referrers_source = "api"
            return merge_descriptors([], api)
        self.last_referrers_source = "fallback"
        try:
            index = self.read_referrers_index(subject_digest)
        except UsageError:  # something else squats on the sha256-<hex> tag: own tags still count
            self.last_referrers_partial = True
            index = []
        extra = self._scan_own_tags(subject_digest, {d.digest for d in index})
        everything = merge_descriptors(index, extra)
        if len(everything) > self.max_referrers:
            self.last_referrers_partial = True
            everything = everything[: self.max_referrers]
        return filter_artifact_type(everything, artifact_type)
