"""A policy-enforcing OCI registry gateway that also serves the Referrers API.

``acx-oci gateway`` sits in front of any OCI registry (the *upstream*) and
proxies the distribution API to it unchanged — request and response bodies
stream both ways, ``Authorization`` and ``WWW-Authenticate`` pass through, and
upload ``Location`` / ``Link`` headers that name the upstream are rewritten to
name the gateway — except for four things:

* ``GET``/``HEAD`` of a cartridge manifest in a repository a policy rule
  covers: the upstream answers first (so the client's own credentials decide
  whether it may read at all), then the policy is evaluated
  (:func:`acx_oci.services.resolve.resolve_loaded` against the upstream, then
  :func:`acx_oci.evaluation.policy.evaluate`) and a failing cartridge is answered ``403``
  with an OCI ``DENIED`` error naming the unmet requirements.
* ``PUT`` of a level-attestation manifest: its credential (uploaded before the
  manifest) and game records are fetched from the upstream and verified
  against the subject cartridge; anything that does not verify against the
  gateway's trust file (forged, self-issued, mis-bound, revoked...) is refused
  ``403 DENIED`` before the upstream sees the manifest.
* ``GET /v2/<name>/referrers/<digest>``: served natively from the upstream's
  Referrers API or, where it has none, its ``sha256-<hex>`` fallback index plus
  the ``acx-att-*`` own tags — so every client gets the API.
* an accepted manifest ``PUT`` with a ``subject`` is answered with
  ``OCI-Subject``. Clients that see that header stop maintaining the fallback
  index, so on an upstream without the API the gateway updates the
  ``sha256-<hex>`` index itself and gives an attestation its own tag (a
  concurrent writer may lose an index entry, never an attestation).

Verdict cache (the only state)
------------------------------
Verdicts are cached per (repository, manifest digest) together with a
*fingerprint*: the sorted digests of the manifest's attestation referrers and
the manifest digest of every ``acx-status-*`` status list in the repository.
A cached verdict is used

1. as is while it is younger than ``fresh_seconds`` (default 2 s) and no
   manifest ``PUT``/``DELETE`` in that repository went through *this* gateway;
2. otherwise after re-listing the fingerprint (one referrers listing, one tag
   listing and one small manifest GET per status list); an unchanged
   fingerprint keeps the verdict, a changed one (a new or removed attestation,
   a re-signed status list after ``revoke``) re-evaluates;
3. never after ``max_age_seconds`` (default 300 s): credential age, expiry and
   status-list freshness depend on the clock, so verdicts are recomputed.

Why a fingerprint and not only invalidation on PUTs: writes can reach the
upstream without passing this gateway (another replica, ``revoke`` run
against the upstream directly). The fingerprint catches those within
``fresh_seconds``; the PUT hook makes this replica's own writes visible at
once. Revocation therefore takes effect within ``fresh_seconds`` everywhere.

Replicas
--------
Nothing but that cache lives in the process: no sessions, no sticky state, no
write-ahead anything. Run N replicas behind any load balancer with the same
policy and trust files; each keeps its own cache, which is always safe
because entries are revalidated against the upstream as above. Index updates
for referrers are read-merge-write with read-back (and own tags as a
backstop), so replicas writing concurrently cannot lose an attestation.

Credentials: proxied requests carry the *client's* credentials. The gateway's
own reads (policy evaluation, referrer listing, credential fetches) and its
index/tag writes use the gateway's docker ``config.json`` credentials for the
upstream, so it needs pull (and, for referrer index upkeep, push) access.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import signal
import socket
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx
import uvicorn
from anyio import to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from acx_oci.crypto.digest import check_digest, sha256_digest
from acx_oci.errors import AcxError, NotFoundError, RegistryError, UsageError
from acx_oci.evaluation.policy import Policy, Verdict, evaluate
from acx_oci.evaluation.verify import VerifyContext, verify_level_credential
from acx_oci.jsonio import parse_json
from acx_oci.model.credential import status_entries
from acx_oci.oci.model import (
    ARTIFACT_ATTESTATION,
    ARTIFACT_CARTRIDGE,
    MANIFEST_ACCEPT,
    MAX_MANIFEST_BYTES,
    MEDIA_INDEX,
    MEDIA_MANIFEST,
    build_index,
    parse_manifest,
)
from acx_oci.oci.ref import Reference
from acx_oci.oci.referrers import descriptor_for_referrer, parse_own_tag, referrer_tag
from acx_oci.oci.registry import RegistryStore
from acx_oci.oci.store import StoreOptions
from acx_oci.services.attestation import MAX_CREDENTIAL_BYTES, credential_layer, evidence_layers, fetch_status_list
from acx_oci.services.attestation import STATUS_TAG_PREFIX as STATUS_PREFIX
from acx_oci.services.cartridge import load_cartridge
from acx_oci.services.resolve import ResolveLimits, resolve_loaded
from acx_oci.trust.trustfile import Trust

log = logging.getLogger("acx_oci.gateway")
access_log = logging.getLogger("acx_oci.gateway.access")

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
                        "trailer", "trailers", "transfer-encoding", "upgrade", "host"})
_PATH_RE = re.compile(r"^/v2/(?P<name>.+)/(?P<kind>manifests|referrers)/(?P<ref>[^/]+)$")
_TYPE_CACHE_MAX = 10_000
_VERDICT_CACHE_MAX = 10_000
_STORES_MAX = 256


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class GatewayConfig:
    """Everything the gateway needs; the clock is injectable so tests can move time."""

    upstream: str
    policy: Policy
    trust: Trust
    timeout: float = 30.0
    insecure: bool = False
    fresh_seconds: float = 2.0
    max_age_seconds: float = 300.0
    max_referrers: int = 1000
    clock: Callable[[], datetime] = field(default=utcnow)

    @property
    def upstream_origin(self) -> str:
        parts = urlsplit(self.upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise UsageError(f"--upstream {self.upstream!r}: expected http(s)://HOST[:PORT]")
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def upstream_host(self) -> str:
        return urlsplit(self.upstream).netloc


def oci_error(status: int, code: str, message: str, detail: Any = None,
              headers: dict[str, str] | None = None) -> JSONResponse:
    """An OCI distribution error body: ``{"errors":[{"code","message","detail"}]}``."""
    err: dict[str, Any] = {"code": code, "message": message}
    if detail is not None:
        err["detail"] = detail
    return JSONResponse({"errors": [err]}, status_code=status, headers=headers)


def _denied_detail(verdict: Verdict) -> dict[str, Any]:
    return {
        "repository": verdict.repository,
        "manifestDigest": verdict.manifest_digest,
        "rules": list(verdict.rules),
        "unmet": [{"description": r.description, "codes": list(r.codes), "reasons": list(r.reasons[:10])}
                  for r in verdict.unmet],
    }


# --------------------------------------------------------------------------- verdict cache


@dataclass
class _Entry:
    fingerprint: tuple[str, ...]
    verdict: Verdict
    evaluated_at: float
    checked_at: float
    generation: int


class VerdictCache:
    """Verdicts per (repository, manifest digest), revalidated by fingerprint (see module docstring)."""

    def __init__(self, fresh_seconds: float, max_age_seconds: float, max_entries: int = _VERDICT_CACHE_MAX) -> None:
        self.fresh_seconds = fresh_seconds
        self.max_age_seconds = max_age_seconds
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._generation: dict[str, int] = {}
        self._lock = threading.Lock()

    def generation(self, repository: str) -> int:
        with self._lock:
            return self._generation.get(repository, 0)

    def invalidate(self, repository: str) -> None:
        """A write went through this gateway: every verdict in the repository gets revalidated."""
        with self._lock:
            self._generation[repository] = self._generation.get(repository, 0) + 1

    def get(self, key: tuple[str, str]) -> _Entry | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def put(self, key: tuple[str, str], entry: _Entry) -> None:
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


# --------------------------------------------------------------------------- the upstream, synchronously


def _status_urls(credential: dict[str, Any]) -> list[str]:
    return [str(s["statusListCredential"]) for s in status_entries(credential)
            if isinstance(s.get("statusListCredential"), str)]


class Upstream:
    """Synchronous access to the upstream through the project's own store (run in worker threads)."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        parts = urlsplit(config.upstream)
        self.options = StoreOptions(plain_http=parts.scheme == "http", insecure=config.insecure,
                                    timeout=config.timeout)
        self._stores: OrderedDict[str, RegistryStore] = OrderedDict()
        self._lock = threading.Lock()
        self._types: OrderedDict[str, str | None] = OrderedDict()

    def store(self, repository: str) -> RegistryStore:
        with self._lock:
            st = self._stores.get(repository)
            if st is None:
                st = RegistryStore(Reference(kind="registry", host=self.config.upstream_host, repository=repository),
                                   self.options)
                st.max_referrers = max(st.max_referrers, self.config.max_referrers)
                self._stores[repository] = st
                while len(self._stores) > _STORES_MAX:
                    _, old = self._stores.popitem(last=False)
                    old.close()
            self._stores.move_to_end(repository)
            return st

    def close(self) -> None:
        with self._lock:
            for st in self._stores.values():
                st.close()
            self._stores.clear()

    def artifact_type(self, repository: str, digest: str) -> str | None:
        """artifactType of a manifest by digest (content-addressed, so cached for good)."""
        with self._lock:
            if digest in self._types:
                return self._types[digest]
        try:
            raw, _, _ = self.store(repository).fetch_manifest_raw(digest)
        except NotFoundError:
            return None
        at = _artifact_type_of(raw)
        with self._lock:
            self._types[digest] = at
            while len(self._types) > _TYPE_CACHE_MAX:
                self._types.popitem(last=False)
        return at

    def fingerprint(self, repository: str, digest: str) -> tuple[str, ...]:
        """What a verdict depends on besides the (immutable) manifest and the clock."""
        st = self.store(repository)
        with ThreadPoolExecutor(max_workers=2) as pool:
            refs_f = pool.submit(st.referrers, digest, ARTIFACT_ATTESTATION)
            tags = [t for t in st.list_tags() if t.startswith(STATUS_PREFIX)]
            status = sorted(f"{t}={d}" for t, d in zip(tags, pool.map(self._manifest_digest(st), tags), strict=True))
            refs = sorted(d.digest for d in refs_f.result().descriptors)
        return (*refs, "|", *status)

    @staticmethod
    def _manifest_digest(st: RegistryStore) -> Callable[[str], str]:
        def one(tag: str) -> str:
            try:
                return st.fetch_manifest_raw(tag)[2]
            except NotFoundError:
                return "gone"
        return one

    def evaluate(self, repository: str, digest: str) -> tuple[Verdict, tuple[str, ...]]:
        """Fingerprint first, then resolve and evaluate: a change racing us only makes the entry stale."""
        fp = self.fingerprint(repository, digest)
        st = self.store(repository)
        cart = load_cartridge(st, digest, self.config.trust)
        resolution = resolve_loaded(st, cart, self.config.trust, now=self.config.clock(),
                                    allow_unknown_status=False,
                                    limits=ResolveLimits(max_referrers=self.config.max_referrers),
                                    reference=f"{self.config.upstream_host}/{repository}@{digest}")
        return evaluate(self.config.policy, repository, resolution, self.config.clock()), fp

    def verify_attestation(self, repository: str, raw: bytes) -> list[tuple[str, str]]:
        """Problems (code, sentence) with a level-attestation manifest about to be PUT; empty if it verifies."""
        try:
            manifest = parse_manifest(raw, "level attestation")
        except UsageError as exc:
            return [("manifest_invalid", str(exc))]
        if manifest.subject is None:
            return [("subject_missing", "a level attestation must have a subject (the cartridge manifest)")]
        layer = credential_layer(manifest)
        if layer is None:
            return [("schema_invalid", "expected exactly one application/vc credential layer")]
        st = self.store(repository)
        try:
            cred_raw = st.fetch_blob(layer.digest, MAX_CREDENTIAL_BYTES)
        except NotFoundError:
            return [("credential_missing", f"credential blob {layer.digest} is not in {repository}; "
                                           "upload blobs before the manifest")]
        try:
            credential = parse_json(cred_raw, f"credential {layer.digest}")
        except UsageError as exc:
            return [("schema_invalid", str(exc))]
        if not isinstance(credential, dict):
            return [("schema_invalid", "the credential is not a JSON object")]
        try:
            cart = load_cartridge(st, manifest.subject.digest, self.config.trust)
        except NotFoundError:
            return [("subject_missing", f"subject {manifest.subject.digest} is not a manifest in {repository}")]
        except UsageError as exc:
            return [("subject_not_cartridge", str(exc))]
        status_list = None
        for url in _status_urls(credential):
            found = fetch_status_list(st, url)
            if found is not None:
                status_list = found[0]
                break
        evidence: dict[str, bytes] = {}
        layers = evidence_layers(manifest)
        if layers:
            with ThreadPoolExecutor(max_workers=8) as pool:
                blobs = pool.map(lambda d: st.fetch_blob(d.digest, MAX_CREDENTIAL_BYTES), layers)
                evidence = {d.digest: b for d, b in zip(layers, blobs, strict=True)}
        ctx = VerifyContext(
            trust=self.config.trust, now=self.config.clock(), expected_rom_digest=cart.rom_digest,
            expected_manifest_digest=manifest.subject.digest, cartridge_controller=cart.controller,
            rom_signer=cart.signer, rom_signer_key=cart.signature.key, status_list=status_list,
            allow_unknown_status=False, evidence=evidence,
        )
        result = verify_level_credential(credential, ctx)
        return [(c.code, c.message) for c in result.checks if not c.ok]

    def record_referrer(self, repository: str, raw: bytes, subject_digest: str, own_tag: bool) -> None:
        """Keep the fallback index (and an attestation's own tag) up to date on an upstream without the API."""
        st = self.store(repository)
        manifest = parse_manifest(raw, "referrer manifest")
        if own_tag:
            st.push_manifest(raw, manifest.media_type, referrer_tag(manifest.digest, subject_digest))
        st.write_referrers_index(subject_digest, [descriptor_for_referrer(manifest)])

    def referrers_index(self, repository: str, digest: str, artifact_type: str | None) -> tuple[bytes, str | None]:
        st = self.store(repository)
        listing = st.referrers(digest, artifact_type)
        return build_index(listing.descriptors), listing.source


def _artifact_type_of(raw: bytes) -> str | None:
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict) or doc.get("mediaType", MEDIA_MANIFEST) != MEDIA_MANIFEST:
        return None
    at = doc.get("artifactType")
    if isinstance(at, str):
        return at
    cfg = doc.get("config")
    mt = cfg.get("mediaType") if isinstance(cfg, dict) else None
    return mt if isinstance(mt, str) else None


# --------------------------------------------------------------------------- the ASGI app


class Gateway:
    """The request handlers; one instance per process."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self.origin = config.upstream_origin
        self.upstream = Upstream(config)
        self.cache = VerdictCache(config.fresh_seconds, config.max_age_seconds)
        self._inflight: dict[tuple[str, str], asyncio.Task[Verdict]] = {}
        self._client: httpx.AsyncClient | None = None
        self.stats = {"evaluations": 0, "revalidations": 0, "fresh_hits": 0}

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            raise RuntimeError("gateway not started (lifespan)")
        return self._client

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        self._client = httpx.AsyncClient(
            verify=not self.config.insecure, follow_redirects=False,
            timeout=httpx.Timeout(self.config.timeout, connect=min(self.config.timeout, 5.0)),
            limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
        )
        try:
            yield
        finally:
            await self._client.aclose()
            self._client = None
            await to_thread.run_sync(self.upstream.close)

    # ------------------------------------------------------------ plumbing

    def _forward_headers(self, request: Request, drop: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        return [(k, v) for k, v in request.headers.items()
                if k.lower() not in HOP_BY_HOP and k.lower() not in drop]

    def _rewrite(self, value: str, request: Request) -> str:
        """Upstream absolute URLs in Location/Link become gateway URLs (relative ones stay)."""
        if self.origin in value:
            mine = f"{request.url.scheme}://{request.headers.get('host', request.url.netloc)}"
            return value.replace(self.origin, mine)
        return value

    def _response_headers(self, resp: httpx.Response, request: Request,
                          drop: tuple[str, ...] = ()) -> list[tuple[bytes, bytes]]:
        out = []
        for k, v in resp.headers.multi_items():
            lk = k.lower()
            if lk in HOP_BY_HOP or lk in drop:
                continue
            if lk in ("location", "link"):
                v = self._rewrite(v, request)
            out.append((lk.encode("latin-1"), v.encode("latin-1")))
        return out

    def _url(self, request: Request) -> str:
        url = self.origin + request.url.path
        if request.url.query:
            url += "?" + request.url.query
        return url

    async def _send(self, request: Request, *, content: Any = None, drop: tuple[str, ...] = (),
                    method: str | None = None, path: str | None = None,
                    extra: dict[str, str] | None = None) -> httpx.Response:
        url = self.origin + path if path is not None else self._url(request)
        headers = self._forward_headers(request, (*drop, *(k.lower() for k in extra or {})))
        headers += list((extra or {}).items())
        req = self.client.build_request(method or request.method, url, headers=headers, content=content)
        try:
            return await self.client.send(req, stream=True)
        except httpx.TimeoutException:
            raise RegistryError(f"upstream {self.config.upstream_host}: no answer within {self.config.timeout:g}s") \
                from None
        except httpx.HTTPError as exc:
            raise RegistryError(f"upstream {self.config.upstream_host} unreachable ({type(exc).__name__})") from None

    def _stream_back(self, resp: httpx.Response, request: Request) -> Response:
        async def body() -> AsyncIterator[bytes]:
            try:
                async for chunk in resp.aiter_raw():
                    yield chunk
            finally:
                await resp.aclose()

        out = StreamingResponse(body(), status_code=resp.status_code)
        out.raw_headers = self._response_headers(resp, request)
        return out

    async def _buffered(self, resp: httpx.Response, cap: int) -> bytes | None:
        """Read a body up to ``cap`` bytes; None (and closed) if it is larger."""
        buf = bytearray()
        try:
            async for chunk in resp.aiter_raw():
                buf += chunk
                if len(buf) > cap:
                    return None
        finally:
            await resp.aclose()
        return bytes(buf)

    # ------------------------------------------------------------ routes

    async def healthz(self, request: Request) -> Response:
        return JSONResponse({"status": "ok", "upstream": self.origin, "cachedVerdicts": len(self.cache)})

    async def readyz(self, request: Request) -> Response:
        try:
            resp = await self.client.get(self.origin + "/v2/")
        except httpx.HTTPError as exc:
            return JSONResponse({"status": "unavailable", "error": type(exc).__name__}, status_code=503)
        ok = resp.status_code < 500
        return JSONResponse({"status": "ok" if ok else "unavailable", "upstreamStatus": resp.status_code},
                            status_code=200 if ok else 503)

    async def handle(self, request: Request) -> Response:
        try:
            return await self._handle(request)
        except PolicyUnreadable as exc:
            request.state.decision = "denied"
            return oci_error(403, "DENIED", f"policy cannot be evaluated: {exc}", _denied_detail(exc.verdict))
        except AcxError as exc:
            request.state.decision = "error"
            status, code = (502, "UNAVAILABLE") if isinstance(exc, RegistryError) else (400, "UNSUPPORTED")
            return oci_error(status, code, str(exc))

    async def _handle(self, request: Request) -> Response:
        path, method = request.url.path, request.method
        m = _PATH_RE.match(path)
        if m is not None:
            name, kind, ref = m.group("name"), m.group("kind"), m.group("ref")
            if kind == "referrers" and method == "GET":
                return await self.referrers(request, name, ref)
            if kind == "manifests" and method in ("GET", "HEAD") and self.config.policy.covers(name):
                return await self.pull_manifest(request, name, ref)
            if kind == "manifests" and method == "PUT":
                return await self.put_manifest(request, name, ref)
            if kind == "manifests" and method == "DELETE":
                self.cache.invalidate(name)
        return await self.passthrough(request)

    async def passthrough(self, request: Request) -> Response:
        content = request.stream() if request.method not in ("GET", "HEAD") else None
        resp = await self._send(request, content=content)
        return self._stream_back(resp, request)

    # ------------------------------------------------------------ pulls

    async def pull_manifest(self, request: Request, name: str, ref: str) -> Response:
        resp = await self._send(request, drop=("accept-encoding",))
        if resp.status_code != 200:
            return self._stream_back(resp, request)
        headers = self._response_headers(resp, request)
        if request.method == "HEAD":
            await resp.aclose()
            digest = resp.headers.get("docker-content-digest") or (ref if ref.startswith("sha256:") else None)
            if digest is None:
                return self._with_headers(Response(b"", status_code=200), headers)
            check_digest(digest, "Docker-Content-Digest")
            at = await to_thread.run_sync(self.upstream.artifact_type, name, digest)
            body = b""
        else:
            raw = await self._buffered(resp, MAX_MANIFEST_BYTES)
            if raw is None:
                return oci_error(502, "UNAVAILABLE", "upstream manifest exceeds the 4 MiB manifest limit")
            body, digest, at = raw, sha256_digest(raw), _artifact_type_of(raw)
        if at == ARTIFACT_CARTRIDGE:
            verdict = await self.verdict(request, name, digest)
            if not verdict.allowed:
                request.state.decision = "denied"
                return oci_error(403, "DENIED", verdict.summary(), _denied_detail(verdict))
            request.state.decision = "allowed"
        return self._with_headers(Response(body, status_code=200), headers)

    @staticmethod
    def _with_headers(response: Response, headers: list[tuple[bytes, bytes]]) -> Response:
        response.raw_headers = headers
        return response

    async def verdict(self, request: Request, repository: str, digest: str) -> Verdict:
        key = (repository, digest)
        now = time.monotonic()
        entry = self.cache.get(key)
        generation = self.cache.generation(repository)
        if entry is not None and now - entry.evaluated_at < self.config.max_age_seconds:
            if entry.generation == generation and now - entry.checked_at < self.config.fresh_seconds:
                self.stats["fresh_hits"] += 1
                request.state.cache = "fresh"
                return entry.verdict
            fp = await to_thread.run_sync(self.upstream.fingerprint, repository, digest)
            if fp == entry.fingerprint:
                self.stats["revalidations"] += 1
                request.state.cache = "revalidated"
                self.cache.put(key, _Entry(fp, entry.verdict, entry.evaluated_at, time.monotonic(), generation))
                return entry.verdict
        request.state.cache = "miss"
        task = self._inflight.get(key)
        if task is None:
            task = asyncio.ensure_future(self._evaluate(repository, digest, generation))
            self._inflight[key] = task
            task.add_done_callback(lambda _t: self._inflight.pop(key, None))
        return await asyncio.shield(task)

    async def _evaluate(self, repository: str, digest: str, generation: int) -> Verdict:
        self.stats["evaluations"] += 1
        started = time.monotonic()
        try:
            verdict, fp = await to_thread.run_sync(self.upstream.evaluate, repository, digest)
        except (UsageError, NotFoundError) as exc:
            # a cartridge that cannot be read or is malformed cannot meet a policy: fail closed
            verdict = Verdict(False, repository, digest, (), (), (f"cannot evaluate: {exc}",))
            raise PolicyUnreadable(str(exc), verdict) from None
        self.cache.put((repository, digest), _Entry(fp, verdict, started, started, generation))
        return verdict

    # ------------------------------------------------------------ pushes

    async def put_manifest(self, request: Request, name: str, ref: str) -> Response:
        body = await request.body()
        if len(body) > MAX_MANIFEST_BYTES:
            return oci_error(413, "SIZE_INVALID", f"manifest is {len(body)} bytes, over {MAX_MANIFEST_BYTES}")
        try:
            doc = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            doc = None
        subject = None
        if isinstance(doc, dict):
            subj = doc.get("subject")
            if isinstance(subj, dict) and isinstance(subj.get("digest"), str):
                subject = subj["digest"]
        # The same rule resolve uses (artifactType, else config.mediaType): a forger must not be able
        # to slip an attestation past this check by moving its type into the config descriptor.
        is_attestation = _artifact_type_of(body) == ARTIFACT_ATTESTATION
        if is_attestation:
            problems = await to_thread.run_sync(self.upstream.verify_attestation, name, body)
            if problems:
                request.state.decision = "refused"
                codes = list(dict.fromkeys(code for code, _ in problems))
                return oci_error(
                    403, "DENIED",
                    f"level attestation refused: {', '.join(codes)} — " + "; ".join(m for _, m in problems[:5]),
                    {"codes": codes, "problems": [{"code": c, "message": m} for c, m in problems]},
                )
            request.state.decision = "verified"
        self.cache.invalidate(name)
        resp = await self._send(request, content=body)
        if resp.status_code not in (200, 201, 202) or subject is None:
            return self._stream_back(resp, request)
        await resp.aclose()
        headers = self._response_headers(resp, request)
        if not resp.headers.get("oci-subject"):
            headers.append((b"oci-subject", subject.encode("latin-1")))
            own = is_attestation and parse_own_tag(ref) is None
            try:
                await to_thread.run_sync(self.upstream.record_referrer, name, body, subject, own)
            except AcxError as exc:
                # the manifest is stored; its own tag or a later `referrers repair` makes it discoverable
                log.warning("referrer index update for %s failed: %s", sha256_digest(body), exc)
                request.state.index_error = str(exc)
        self.cache.invalidate(name)
        return self._with_headers(Response(b"", status_code=resp.status_code), headers)

    # ------------------------------------------------------------ referrers

    async def referrers(self, request: Request, name: str, digest: str) -> Response:
        try:
            check_digest(digest, "subject digest")
        except UsageError as exc:
            return oci_error(400, "DIGEST_INVALID", str(exc))
        # The client's credentials decide whether it may read this repository at all.
        probe = await self._send(request, method="HEAD", path=f"/v2/{name}/manifests/{digest}",
                                 drop=("content-length", "content-type"), extra={"Accept": MANIFEST_ACCEPT})
        await probe.aclose()
        if probe.status_code in (401, 403):
            return self._with_headers(Response(b"", status_code=probe.status_code),
                                      self._response_headers(probe, request, drop=("content-length",)))
        artifact_type = request.query_params.get("artifactType") or None
        if probe.status_code == 404:
            body: bytes = build_index([])
        else:
            body, source = await to_thread.run_sync(self.upstream.referrers_index, name, digest, artifact_type)
            request.state.referrers_source = source
        headers = {"Content-Type": MEDIA_INDEX, "Docker-Distribution-API-Version": "registry/2.0"}
        if artifact_type:
            headers["OCI-Filters-Applied"] = "artifactType"
        return Response(body, status_code=200, headers=headers, media_type=MEDIA_INDEX)


class PolicyUnreadable(UsageError):
    """The cartridge could not be loaded for evaluation; carries a denying verdict."""

    def __init__(self, message: str, verdict: Verdict) -> None:
        super().__init__(message)
        self.verdict = verdict


class AccessLog:
    """ASGI middleware: one JSON line per request (method, path, status, ms, bytes, decision, cache)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        state: dict[str, Any] = scope.setdefault("state", {})
        status = 0
        sent = 0

        async def wrapped(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, wrapped)
        finally:
            client = scope.get("client")
            record = {
                "ts": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "remote": f"{client[0]}:{client[1]}" if client else None,
                "method": scope.get("method"), "path": scope.get("path"),
                "query": scope.get("query_string", b"").decode("latin-1") or None,
                "status": status, "bytes": sent, "ms": round((time.monotonic() - started) * 1000, 2),
            }
            for k in ("decision", "cache", "referrers_source", "index_error"):
                if k in state:
                    record[k] = state[k]
            access_log.info(json.dumps(record, separators=(",", ":")))


def create_app(config: GatewayConfig) -> tuple[ASGIApp, Gateway]:
    """The ASGI app (access log around a Starlette app) and the handler object behind it."""
    gw = Gateway(config)

    methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    app = Starlette(
        routes=[
            Route("/healthz", gw.healthz, methods=["GET"]),
            Route("/readyz", gw.readyz, methods=["GET"]),
            Route("/{path:path}", gw.handle, methods=methods),
        ],
        lifespan=gw.lifespan,
    )
    return AccessLog(app), gw


def configure_access_log(stream: Any = None) -> None:
    """JSON lines on stderr (the message is already JSON)."""
    if access_log.handlers:
        return
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    access_log.addHandler(handler)
    access_log.setLevel(logging.INFO)
    access_log.propagate = False


def parse_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not host or not 0 <= int(port) <= 65535:
        raise UsageError(f"--listen {listen!r}: expected HOST:PORT with a port from 0 to 65535")
    return host.strip("[]"), int(port)


class _Server(uvicorn.Server):
    """uvicorn's server, but a SIGTERM/SIGINT that ended in a graceful shutdown exits 0.

    (uvicorn re-raises the signal after shutting down, so the process would
    die "by signal" even though every in-flight request was completed.)
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def serve(config: GatewayConfig, listen: str, graceful_seconds: float = 30.0) -> None:
    """Run until SIGINT/SIGTERM: stop accepting, give in-flight requests ``graceful_seconds``, close upstream pools."""
    host, port = parse_listen(listen)
    configure_access_log()
    app, _ = create_app(config)
    cfg = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="on",
                         timeout_graceful_shutdown=int(graceful_seconds), proxy_headers=False, server_header=False)
    _Server(cfg).run()


@dataclass
class RunningGateway:
    """A gateway served from a background thread (tests, benchmarks)."""

    server: uvicorn.Server
    thread: threading.Thread
    host: str
    port: int
    gateway: Gateway

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


def start_in_thread(config: GatewayConfig, host: str = "127.0.0.1", port: int = 0,
                    timeout: float = 10.0) -> RunningGateway:
    """Bind (port 0 = ephemeral), serve in a daemon thread, return once it accepts connections."""
    app, gw = create_app(config)
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY on accepted sockets only when the listening socket's
    # proto says TCP, and without it a response written as headers + body waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    cfg = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", server_header=False)
    server = uvicorn.Server(cfg)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="acx-gateway")
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("gateway did not start")
        time.sleep(0.01)
    return RunningGateway(server, thread, host, sock.getsockname()[1], gw)


__all__ = ["Gateway", "GatewayConfig", "RunningGateway", "VerdictCache", "create_app", "serve", "start_in_thread"]
