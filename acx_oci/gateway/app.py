"""A policy-enforcing OCI registry gateway that also serves the Referrers API.

``acx-oci gateway`` sits in front of any OCI registry (the *upstream*) and
proxies the distribution API to it unchanged — request and response bodies
stream both ways, ``Authorization`` and ``WWW-Authenticate`` pass through, and
upload ``Location`` / ``Link`` headers that name the upstream are rewritten to
name the gateway — except for four things:

* ``GET``/``HEAD`` of a cartridge manifest in a repository a policy rule
  covers: the upstream answers first (so the client's own credentials decide
  whether it may read at all), then the policy is evaluated
  (:func:`acx_oci.services.consumer.resolve.resolve_loaded` against the upstream, then
  :func:`acx_oci.evaluation.policy.evaluate`) and a failing cartridge is answered ``403``
  with an OCI ``DENIED`` error naming the unmet requirements.
* ``PUT`` of a manifest to a status-list tag ``acx-status-<uuid>``: the list
  must verify as its issuer's and its ``acx:sequence`` must be higher than
  the one upstream (and than any this gateway accepted before); an older list
  put back is refused ``403 DENIED`` (``status_rollback``, both sequences in
  the detail). ``DELETE`` of a status-list manifest is refused likewise.
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
* every request is parsed once, from the raw path, by :mod:`acx_oci.gateway.paths` (dot, empty or
  percent-encoded segments and malformed names or digests: ``400`` before anything is forwarded), and
  forwarded to exactly the path matched; blob ``GET``/``HEAD`` in a covered repository follow the verdicts of
  the manifests that reference them (:mod:`acx_oci.gateway.blobs`). The gateway's own denials carry the
  ``acx-gateway-denied`` header, so the acx-oci client reports them as policy failures (exit 1).
(Verdict cache and replicas: :mod:`acx_oci.gateway.cache`; the gateway's own upstream reads: ``upstream``.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import httpx
from anyio import CapacityLimiter, to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from acx_oci import reasons
from acx_oci.crypto import check_digest, sha256_digest
from acx_oci.errors import (
    AcxError,
    NotFoundError,
    PolicyUnreadable,
    RegistryError,
    RequestRefused,
    UsageError,
    VerificationError,
)
from acx_oci.evaluation import Verdict
from acx_oci.gateway.access import AccessLog
from acx_oci.gateway.blobs import BlobLedger
from acx_oci.gateway.bodies import read_manifest_body
from acx_oci.gateway.cache import CacheEntry, VerdictCache
from acx_oci.gateway.config import GatewayConfig
from acx_oci.gateway.paths import ApiPath, is_digest, manifest_body_digests, parse_request, raw_path_of, target
from acx_oci.gateway.proxy import Proxy, denied, oci_error
from acx_oci.gateway.upstream import UNREADABLE, Upstream, artifact_type_of, manifest_refs
from acx_oci.oci import (
    ARTIFACT_ATTESTATION,
    ARTIFACT_CARTRIDGE,
    ARTIFACT_STATUS_LIST,
    EMPTY_DIGEST,
    MANIFEST_ACCEPT,
    MAX_MANIFEST_BYTES,
    MEDIA_INDEX,
    build_index,
    check_manifest_size,
    parse_own_tag,
)
from acx_oci.services.artifacts import STATUS_TAG_PREFIX

log = logging.getLogger("acx_oci.gateway")

_WALK_TAGS = 200  # tags the blob ledger reads when asked for a blob it has never seen referenced


T = TypeVar("T")
_CONDITIONALS = ("if-none-match", "if-modified-since", "if-match", "if-unmodified-since")


def _denied_detail(verdict: Verdict) -> dict[str, Any]:
    return {"repository": verdict.repository, "manifestDigest": verdict.manifest_digest, "rules": list(verdict.rules),
            "unmet": [{"description": r.description, "codes": list(r.codes), "reasons": list(r.reasons[:10])}
                      for r in verdict.unmet]}


class Gateway(Proxy):
    """The request handlers; one instance per process."""

    def __init__(self, config: GatewayConfig) -> None:
        super().__init__(config)
        self.upstream = Upstream(config)
        self.cache = VerdictCache(config.fresh_seconds, config.max_age_seconds)
        self.blobs = BlobLedger()
        self._inflight: dict[tuple[str, str], asyncio.Task[Verdict]] = {}
        self.stats = {"evaluations": 0, "revalidations": 0, "fresh_hits": 0}
        self._heavy: CapacityLimiter | None = None

    async def offload(self, fn: Callable[..., T], *args: Any) -> T:
        """Heavy upstream work on its own limiter (made on first use: it belongs to the running event loop)."""
        if self._heavy is None:
            self._heavy = CapacityLimiter(max(1, self.config.evaluation_threads))
        return await to_thread.run_sync(fn, *args, limiter=self._heavy)

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        """Starlette's lifespan: opens the upstream client, and on shutdown also closes the worker threads' stores."""
        async with self.client_lifespan(app):
            try:
                yield
            finally:
                await to_thread.run_sync(self.upstream.close)

    # ------------------------------------------------------------ routes

    async def healthz(self, request: Request) -> Response:
        """Liveness: answers while the process does, whatever the upstream's state (that is ``/readyz``)."""
        return JSONResponse({"status": "ok"})  # no more: the upstream URL may hold credentials; counts: /metrics

    async def readyz(self, request: Request) -> Response:
        """Readiness: 503 if the upstream is unreachable or answers 5xx (a 401 from its ``/v2/`` is ready)."""
        try:
            resp = await self.client.get(self.origin + "/v2/")
        except httpx.HTTPError as exc:
            return JSONResponse({"status": "unavailable", "error": type(exc).__name__}, status_code=503)
        ok = resp.status_code < 500
        return JSONResponse({"status": "ok" if ok else "unavailable", "upstreamStatus": resp.status_code},
                            status_code=200 if ok else 503)

    async def handle(self, request: Request) -> Response:
        """The catch-all route: a path that fails the raw parse is refused unforwarded; an AcxError is an OCI error."""
        try:
            api = parse_request(raw_path_of(request.scope), request.scope.get("query_string", b""), request.method)
        except RequestRefused as exc:
            request.state.decision = "refused"
            return oci_error(exc.status, exc.oci_code, exc.message)
        try:
            return await self._handle(request, api)
        except PolicyUnreadable as exc:
            request.state.decision = "denied"
            return denied(f"policy cannot be evaluated: {exc}", _denied_detail(exc.verdict))
        except AcxError as exc:
            request.state.decision = "error"
            if isinstance(exc, RegistryError):
                status, code = 502, "UNAVAILABLE"
            elif isinstance(exc, NotFoundError):
                status, code = 404, "NAME_UNKNOWN"
            else:
                status, code = 400, "UNSUPPORTED"
            return oci_error(status, code, str(exc))

    async def _handle(self, request: Request, api: ApiPath) -> Response:
        method, name, ref = request.method, api.name, api.ref
        covered = api.kind not in ("base", "catalog") and self.config.policy.covers(name)
        if api.kind == "referrers" and method == "GET":
            return await self.referrers(request, api)
        if api.kind == "manifests" and method in ("GET", "HEAD") and covered:
            return await self.pull_manifest(request, api)
        if api.kind == "blobs" and method in ("GET", "HEAD") and covered:
            return await self.pull_blob(request, api)
        if api.mount is not None and api.mount_from is not None and self.config.policy.covers(api.mount_from):
            # a cross-repository mount reads the blob out of ``from``: the same rule as a GET there
            refused = await self.refuse_blob(request, api.mount_from, api.mount, probe=False)
            if refused is not None:
                return refused
        if api.kind == "manifests" and method == "PUT":
            return await self.put_manifest(request, api)
        if api.kind == "manifests" and method == "DELETE":
            refused = await self.refuse_status_delete(request, name, ref)
            if refused is not None:
                return refused
            self.cache.invalidate(name)
        return await self.passthrough(request, api)

    async def passthrough(self, request: Request, api: ApiPath) -> Response:
        """What the gateway does not judge: forwarded as matched, a request body streamed (GET/HEAD send none)."""
        content = request.stream() if request.method not in ("GET", "HEAD") else None
        resp = await self._send(request, target(api), content=content)
        return self._stream_back(resp, request)

    # ------------------------------------------------------------ pulls

    async def pull_manifest(self, request: Request, api: ApiPath) -> Response:
        """A covered manifest GET/HEAD: the upstream answers first, then a cartridge is served only if it is allowed."""
        name, ref = api.name, api.ref
        # Only a whole 200 body can be judged: no Range (a registry that honours it would hand out the denied
        # manifest in unjudged 206 pieces), no conditionals (a 304 to If-None-Match told a client its cached copy of
        # a since-revoked cartridge was still good), and any other 2xx is not relayed.
        resp = await self._send(request, target(api), drop=("accept-encoding", "range", "if-range", *_CONDITIONALS))
        if 200 < resp.status_code < 300:
            await resp.aclose()
            return oci_error(502, "UNAVAILABLE", f"upstream answered a manifest {request.method} with "
                                                 f"{resp.status_code}; only a whole 200 answer can be judged")
        if resp.status_code != 200:
            return self._stream_back(resp, request)
        headers = self._response_headers(resp, request)
        if request.method == "HEAD":
            await resp.aclose()
            digest = ref if is_digest(ref) else resp.headers.get("docker-content-digest")
            if digest is None:  # an upstream that does not name it: ask it ourselves
                digest = await to_thread.run_sync(lambda: self.upstream.store(name).fetch_manifest_raw(ref)[2])
            check_digest(digest, "Docker-Content-Digest")
            at, blobs, _ = await to_thread.run_sync(self.upstream.manifest_info, name, digest)
            body = b""
        else:
            raw = await self._buffered(resp, MAX_MANIFEST_BYTES)
            if raw is None:
                return oci_error(502, "UNAVAILABLE", "upstream manifest exceeds the 4 MiB manifest limit")
            body, digest, at = raw, sha256_digest(raw), artifact_type_of(raw)
            blobs = manifest_refs(raw)[0]
        self.blobs.record(name, digest, blobs, at == ARTIFACT_CARTRIDGE)
        if at == UNREADABLE:  # a cartridge to a Go client, perhaps, and judged by nobody: not served here
            request.state.decision = "denied"
            return denied(f"manifest {digest} cannot be read as I-JSON, so the policy cannot judge it",
                          {"codes": [reasons.SCHEMA_INVALID]})
        if at == ARTIFACT_CARTRIDGE:
            verdict = await self.verdict(request, name, digest)
            if not verdict.allowed:
                request.state.decision = "denied"
                return denied(verdict.summary(), _denied_detail(verdict))
            request.state.decision = "allowed"
        return self._with_headers(Response(body, status_code=200), headers)

    async def pull_blob(self, request: Request, api: ApiPath) -> Response:
        """The upstream answers first (the client's credentials decide whether it may read at all), then the
        ledger; a redirect (an object-store URL) is gated like the bytes it leads to."""
        resp = await self._send(request, target(api))
        try:
            refused = None
            if resp.status_code < 400:
                # HEAD walks and is judged like GET (a denied cartridge's blob is 403 to both); only a blob no
                # manifest references passes a HEAD: every push is in that state between upload and manifest PUT
                refused = await self.refuse_blob(request, api.name, api.ref, probe=request.method == "HEAD")
        except BaseException:
            await resp.aclose()
            raise
        if refused is not None:
            await resp.aclose()
            return refused
        return self._stream_back(resp, request)

    async def refuse_blob(self, request: Request, name: str, digest: str, probe: bool) -> Response | None:
        """The blob ledger's decision (:mod:`acx_oci.gateway.blobs`): None to serve, else the 403."""
        if digest == EMPTY_DIGEST:
            return None
        refs = self.blobs.referring(name, digest)
        if not refs and self.blobs.may_walk(name, time.monotonic(), self.config.fresh_seconds):
            try:
                found = await self.offload(self.upstream.tagged_manifests, name, _WALK_TAGS)
            except NotFoundError:
                found = []
            for m, at, blobs in found:
                self.blobs.record(name, m, blobs, at == ARTIFACT_CARTRIDGE)
            refs = self.blobs.referring(name, digest)
        if not refs:
            if probe:
                return None
            request.state.decision = "denied"
            return denied(f"blob {digest} is not referenced by any manifest this gateway has served from {name}: "
                          "fetch it through the manifest that references it", {"codes": [reasons.BLOB_UNREFERENCED]})
        cartridges = [m for m, is_cart in refs.items() if is_cart]
        verdicts = [await self.verdict(request, name, m) for m in cartridges]
        if not cartridges or any(v.allowed for v in verdicts):
            request.state.decision = "allowed"
            return None
        request.state.decision = "denied"
        return denied(f"blob {digest} belongs to a cartridge the policy denies: {verdicts[0].summary()}",
                      {"codes": [reasons.BLOB_DENIED], **_denied_detail(verdicts[0])})

    async def verdict(self, request: Request, repository: str, digest: str) -> Verdict:
        """The policy's verdict, cached and revalidated by fingerprint; PolicyUnreadable (fail closed) if unreadable."""
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
                self.cache.put(key, CacheEntry(fp, entry.verdict, entry.evaluated_at, time.monotonic(), generation))
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
            verdict, fp = await self.offload(self.upstream.evaluate, repository, digest)
        except (UsageError, NotFoundError, VerificationError, RecursionError) as exc:
            # a cartridge that cannot be read, is malformed or is tampered cannot meet a policy: fail closed
            verdict = Verdict(False, repository, digest, (), (), (f"cannot evaluate: {exc}",))
            raise PolicyUnreadable(str(exc), verdict) from None
        self.cache.put((repository, digest), CacheEntry(fp, verdict, started, started, generation))
        return verdict

    # ------------------------------------------------------------ pushes

    async def put_manifest(self, request: Request, api: ApiPath) -> Response:
        """A manifest push: a status list or level attestation is verified before the upstream ever sees it."""
        name, ref = api.name, api.ref
        body = await request.body()
        try:
            check_manifest_size(body, "manifest")
        except UsageError as exc:
            return oci_error(413, "SIZE_INVALID", str(exc))
        doc, unreadable = read_manifest_body(body)
        if unreadable is not None:
            request.state.decision = "refused"
            return oci_error(400, "MANIFEST_INVALID", f"{reasons.SCHEMA_INVALID}: {unreadable}",
                             {"codes": [reasons.SCHEMA_INVALID]})
        bad = [d for d in manifest_body_digests(doc) if not is_digest(d)]
        if bad:  # refused here, before the upstream stores anything
            request.state.decision = "refused"
            return oci_error(400, "DIGEST_INVALID", f"manifest names a malformed digest {bad[0][:80]!r}: expected "
                                                    "sha256:<64 hex> or sha512:<128 hex>")
        subject = None
        if isinstance(doc, dict):
            subj = doc.get("subject")
            if isinstance(subj, dict) and isinstance(subj.get("digest"), str):
                subject = subj["digest"]
        # resolve's rule (artifactType, else config.mediaType): an attestation typed only in its config is still one
        is_attestation = artifact_type_of(body) == ARTIFACT_ATTESTATION
        status_detail: dict[str, Any] | None = None
        if ref.startswith(STATUS_TAG_PREFIX):
            problems, detail = await self.offload(self.upstream.check_status_push, name, body, ref)
            status_detail = detail
            if problems:
                request.state.decision = "refused"
                codes = list(dict.fromkeys(code for code, _ in problems))
                return denied(
                    f"status list refused: {', '.join(codes)} — " + "; ".join(m for _, m in problems),
                    {"codes": codes, "problems": [{"code": c, "message": m} for c, m in problems], **detail},
                )
        if is_attestation:
            problems = await self.offload(self.upstream.verify_attestation, name, body)
            if problems:
                request.state.decision = "refused"
                codes = list(dict.fromkeys(code for code, _ in problems))
                return denied(
                    f"level attestation refused: {', '.join(codes)} — " + "; ".join(m for _, m in problems[:5]),
                    {"codes": codes, "problems": [{"code": c, "message": m} for c, m in problems]},
                )
            request.state.decision = "verified"
        self.cache.invalidate(name)
        resp = await self._send(request, target(api), content=body)
        if resp.status_code in (200, 201, 202) and self.config.policy.covers(name):
            # a fact like any manifest served: its blobs' HEADs during the push must not spend the tag walk first
            self.blobs.record(name, sha256_digest(body), manifest_refs(body)[0],
                              artifact_type_of(body) == ARTIFACT_CARTRIDGE)
        if status_detail and resp.status_code in (200, 201, 202):
            await to_thread.run_sync(self.upstream.accepted_status_push, status_detail)
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

    async def refuse_status_delete(self, request: Request, name: str, ref: str) -> Response | None:
        """A status list is replaced by a newer one, never deleted through the gateway (that would reset its
        sequence upstream and let an older list back in)."""
        if is_digest(ref):  # sha512 too: a registry that indexes both would delete the list by either
            is_status = await to_thread.run_sync(self.upstream.artifact_type, name, ref) == ARTIFACT_STATUS_LIST
        else:
            is_status = ref.startswith(STATUS_TAG_PREFIX)
        if not is_status:
            return None
        request.state.decision = "refused"
        return denied("status lists are not deleted through the gateway: push a newer one "
                      "(a higher acx:sequence) instead", {"codes": [reasons.STATUS_DELETE]})

    # ------------------------------------------------------------ referrers

    async def referrers(self, request: Request, api: ApiPath) -> Response:
        """The Referrers API on any upstream, after a HEAD of the subject with the client's own credentials."""
        name, digest = api.name, api.ref
        # The client's credentials decide whether it may read this repository at all.
        probe = await self._send(request, f"/v2/{name}/manifests/{digest}", method="HEAD",
                                 drop=("content-length", "content-type"), extra={"Accept": MANIFEST_ACCEPT})
        await probe.aclose()
        if probe.status_code == 404:  # a referrer may go up before its subject: listed if the client sees the
            # repository (a registry may answer 404 for one it hides; the listing below uses the gateway's access)
            probe = await self._send(request, f"/v2/{name}/tags/list?n=1", method="GET",
                                     drop=("content-length", "content-type"), extra={"Accept": "application/json"})
            await probe.aclose()
        if probe.status_code in (401, 403):
            return self._with_headers(Response(b"", status_code=probe.status_code),
                                      self._response_headers(probe, request, drop=("content-length",)))
        artifact_type = request.query_params.get("artifactType") or None
        body = build_index([])
        with contextlib.suppress(NotFoundError):  # a repository that does not exist lists nothing
            if probe.status_code != 404:
                body, request.state.referrers_source = await self.offload(self.upstream.referrers_index, name,
                                                                          digest, artifact_type)
        headers = {"Content-Type": MEDIA_INDEX, "Docker-Distribution-API-Version": "registry/2.0"}
        if artifact_type:
            headers["OCI-Filters-Applied"] = "artifactType"
        return Response(body, status_code=200, headers=headers, media_type=MEDIA_INDEX)


def create_app(config: GatewayConfig) -> tuple[ASGIApp, Gateway]:
    """The ASGI app (access log around a Starlette app) and the handler object behind it."""
    gw = Gateway(config)

    methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    app = Starlette(routes=[
        Route("/healthz", gw.healthz, methods=["GET"]), Route("/readyz", gw.readyz, methods=["GET"]),
        Route("/{path:path}", gw.handle, methods=methods),
    ], lifespan=gw.lifespan)
    return AccessLog(app), gw
