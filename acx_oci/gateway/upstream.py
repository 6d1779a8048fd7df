"""The gateway's own, synchronous reads and writes against the upstream (run in worker threads).

Credentials: proxied requests carry the *client's* credentials. The gateway's
own reads (policy evaluation, referrer listing, credential fetches) and its
index/tag writes use the gateway's docker ``config.json`` credentials for the
upstream, so it needs pull (and, for referrer index upkeep, push) access.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from acx_oci import reasons
from acx_oci.errors import AcxError, NotFoundError, UsageError, VerificationError
from acx_oci.evaluation import Check, Verdict, accepting, evaluate, list_owners, may_replace, pinned_keys
from acx_oci.gateway.config import GatewayConfig
from acx_oci.gateway.paths import is_digest
from acx_oci.gateway.referrers import annotated_referrers, referrer_descriptor, typed_index_referrers
from acx_oci.jsonio import loads_ijson, parse_json
from acx_oci.model import AcceptedCredential, issuer_id, statuslist
from acx_oci.oci import (
    ARTIFACT_ATTEMPT_RECORD,
    ARTIFACT_ATTESTATION,
    ARTIFACT_STATUS_LIST,
    MEDIA_MANIFEST,
    Descriptor,
    Manifest,
    Reference,
    RegistryStore,
    StoreOptions,
    api_support,
    build_index,
    parse_manifest,
    referrer_tag,
    referrers_api,
)
from acx_oci.services.artifacts import (
    MAX_CREDENTIAL_BYTES,
    MAX_STATUS_LIST_BYTES,
    LoadedCartridge,
    credential_layer,
    evidence_layers,
    fetch_status_list,
    load_cartridge,
    names_status_tag,
    records_layer,
    status_tag,
)
from acx_oci.services.artifacts import STATUS_TAG_PREFIX as STATUS_PREFIX
from acx_oci.services.consumer import (
    MAX_OWNER_READS,
    BlobMemo,
    CredentialMemo,
    LogHistory,
    ReplayJob,
    ResolveLimits,
    StatusHistory,
    StatusSources,
    answer_needs,
    cartridge_facts,
    fetch_layers,
    gather_logs,
    material_of,
    replay_jobs,
    repository_credentials,
    resolve_loaded,
)

_TYPE_CACHE_MAX = 10_000
# Game records one attestation push may carry (declared sizes of its distinct evidence layers): they are read into
# memory on an evaluation thread before the credential is judged. 90 honest records are a few MiB.
MAX_PUSH_EVIDENCE_BYTES = 64 * 1024 * 1024
_STORES_MAX = 256

_log = logging.getLogger(__name__)


class Upstream:
    """Synchronous access to the upstream through the project's own store (run in worker threads)."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        parts = urlsplit(config.upstream)
        self.options = StoreOptions(plain_http=parts.scheme == "http", insecure=config.insecure,
                                    ca_file=config.ca_file, timeout=config.timeout)
        self._stores: OrderedDict[str, RegistryStore] = OrderedDict()
        self._lock = threading.Lock()
        self._types: OrderedDict[str, tuple[str | None, tuple[str, ...], tuple[str, ...]]] = OrderedDict()
        self._history: StatusHistory | None = None
        self.credential_memo = CredentialMemo()  # whose status-list places are whose (services.consumer.status_owners)

    @property
    def history(self) -> StatusHistory:
        """The gateway's own memory of status-list sequences (pull verdicts and pushes), opened on first use."""
        with self._lock:
            if self._history is None:
                self._history = StatusHistory(self.config.status_cache_dir)
            return self._history

    def store(self, repository: str) -> RegistryStore:
        """The project's store for one upstream repository, reused (at most 256 kept; the oldest is closed)."""
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
        """Close every cached store's connections; the app's lifespan calls it on shutdown (in a worker thread)."""
        with self._lock:
            for st in self._stores.values():
                st.close()
            self._stores.clear()

    def artifact_type(self, repository: str, digest: str) -> str | None:
        """artifactType of a manifest by digest (content-addressed, so cached for good)."""
        return self.manifest_info(repository, digest)[0]

    def manifest_info(self, repository: str, digest: str) -> tuple[str | None, tuple[str, ...], tuple[str, ...]]:
        """(artifactType, blob digests, child manifest digests) of a manifest by digest (cached for good)."""
        with self._lock:
            if digest in self._types:
                self._types.move_to_end(digest)
                return self._types[digest]
        try:
            raw, _, _ = self.store(repository).fetch_manifest_raw(digest)
        except NotFoundError:
            return None, (), ()
        info = (artifact_type_of(raw), *manifest_refs(raw))
        with self._lock:
            self._types[digest] = info
            while len(self._types) > _TYPE_CACHE_MAX:
                self._types.popitem(last=False)
        return info

    def tagged_manifests(self, repository: str, max_tags: int) -> list[tuple[str, str | None, tuple[str, ...]]]:
        """(digest, artifactType, blobs) of the manifests the first ``max_tags`` tags name, index children included.

        The blob ledger's fallback for a blob it has never seen referenced (another replica served the
        manifest, or this process restarted): bounded, one tag listing plus one GET per tag not yet cached.
        """
        st = self.store(repository)
        tags = st.list_tags()[:max_tags]
        digests: list[str] = []
        with ThreadPoolExecutor(max_workers=8) as pool:
            for d in pool.map(self._manifest_digest(st), tags):
                if d != "gone" and d not in digests:
                    digests.append(d)
            out: list[tuple[str, str | None, tuple[str, ...]]] = []
            children: list[str] = []
            for d, (at, blobs, kids) in zip(digests, pool.map(lambda x: self.manifest_info(repository, x), digests),
                                            strict=True):
                out.append((d, at, blobs))
                children.extend(k for k in kids if k not in digests and k not in children)
            children = children[:max_tags]
            for d, (at, blobs, _) in zip(children, pool.map(lambda x: self.manifest_info(repository, x), children),
                                         strict=True):
                out.append((d, at, blobs))
        return out

    def fingerprint(self, repository: str, digest: str) -> tuple[str, ...]:
        """What a verdict depends on besides the (immutable) manifest and the clock."""
        st = self.store(repository)
        with ThreadPoolExecutor(max_workers=3) as pool:
            refs_f = pool.submit(list_referrers, st, digest, ARTIFACT_ATTESTATION)
            # attempt records bound a verdict too (maxAttempts): a new one must not leave a cached allow standing
            tries_f = pool.submit(list_referrers, st, digest, ARTIFACT_ATTEMPT_RECORD)
            tags = [t for t in st.list_tags() if t.startswith(STATUS_PREFIX)]
            status = sorted(f"{t}={d}" for t, d in zip(tags, pool.map(self._manifest_digest(st), tags), strict=True))
            refs = sorted(d.digest for d in refs_f.result()[0])
            tries = sorted(d.digest for d in tries_f.result()[0])
        return (*refs, "|", *tries, "|", *status)

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
                                    reference=f"{self.config.upstream_host}/{repository}@{digest}",
                                    status_history=self.history, replay=self.config.replay,
                                    log=self.config.log)
        _log.debug("resolved %s/%s@%s: %d credential(s) verified; phases %s", self.config.upstream_host, repository,
                   digest, resolution.verifications, json.dumps(resolution.phases, separators=(",", ":")))
        return evaluate(self.config.policy, repository, resolution, self.config.clock()), fp

    def verify_attestation(self, repository: str, raw: bytes) -> list[tuple[str, str]]:
        """Problems (code, sentence) with a level-attestation manifest about to be PUT; empty if it verifies."""
        try:
            manifest = parse_manifest(raw, "level attestation")
        except UsageError as exc:
            return [(reasons.MANIFEST_INVALID, str(exc))]
        if manifest.subject is None:
            return [(reasons.SUBJECT_MISSING, "a level attestation must have a subject (the cartridge manifest)")]
        layer = credential_layer(manifest)
        if layer is None:
            return [(reasons.SCHEMA_INVALID, "expected exactly one application/vc credential layer")]
        distinct: dict[str, Descriptor] = {}
        for d in evidence_layers(manifest):
            distinct.setdefault(d.digest, d)
        layers = list(distinct.values())
        bundle = records_layer(manifest)  # the one game-records layer (the current layout)
        declared = sum(d.size for d in layers) + (bundle.size if bundle else 0)
        if declared > MAX_PUSH_EVIDENCE_BYTES:  # refused before a byte is read: a manifest may list ~25 000 layers
            return [(reasons.EVIDENCE_TOO_LARGE, f"the attestation's {len(layers)} game records declare "
                                                 f"{declared} bytes; expected at most {MAX_PUSH_EVIDENCE_BYTES}")]
        st = self.store(repository)
        memo = BlobMemo()
        try:  # (read once: the judge's fetch below takes it from the memo)
            memo.fetch(st, layer.digest, MAX_CREDENTIAL_BYTES, layer.size)
        except NotFoundError:
            return [(reasons.CREDENTIAL_MISSING, f"credential blob {layer.digest} is not in {repository}; "
                                                 "upload blobs before the manifest")]
        except AcxError:
            pass  # (another defect: the judge's fetch reports it with resolve's code)
        try:
            cart = load_cartridge(st, manifest.subject.digest, self.config.trust)
        except NotFoundError:
            return [(reasons.SUBJECT_MISSING, f"subject {manifest.subject.digest} is not a manifest in {repository}")]
        except UsageError as exc:
            return [(reasons.SUBJECT_NOT_CARTRIDGE, str(exc))]
        except VerificationError as exc:  # a tampered ROM: nothing to attest
            return [(exc.code, str(exc))]
        return self._judge_push(st, manifest, cart, memo)

    def _judge_push(self, st: RegistryStore, manifest: Manifest, cart: LoadedCartridge,
                    memo: BlobMemo) -> list[tuple[str, str]]:
        """The attestation about to be PUT, fetched and judged as ``resolve`` fetches and judges each one."""
        trust, now = self.config.trust, self.config.clock()
        fetched = fetch_layers(st, manifest, manifest.digest, cart.manifest.digest, True, memo)
        material = material_of(st, [fetched], StatusSources(history=self.history))
        pinned = pinned_keys(trust) if self.config.log else {}
        if pinned:
            material = replace(material, log_keys=pinned)
            logs = gather_logs(material, trust, LogHistory(self.history.directory))
            material = replace(material, logs=logs.views)
        elif self.config.log:
            material = replace(material, logs={})

        def replayed(acc: AcceptedCredential) -> Check:
            """The same replay resolve does, over the records this push carries (already fetched)."""
            records = fetched.evidence or {}
            job = ReplayJob(acc.attestation_digest, acc.credential, acc.credential_digest, tuple(records), records)
            return replay_jobs(st, [job], trust, now)[acc.attestation_digest]

        # the judge asks for the replay and we answer (did:web as resolve in the gateway: the trust file's only)
        verdict = answer_needs(accepting(material, cartridge_facts(cart), trust, now, replay=self.config.replay),
                               replay=replayed)
        return verdict.problems()

    def check_status_push(self, repository: str, raw: bytes, tag: str) -> tuple[list[tuple[str, str]], dict[str, Any]]:
        """Problems (code, sentence) with a status list about to be PUT at ``acx-status-<uuid>``, and the detail.

        The pushed list must be a status list for that tag whose proof verifies as its issuer's; its
        ``acx:sequence`` must be higher than that of the list at this tag upstream (when that one
        verifies; a verified list of another issuer may not be replaced at all) and not lower than the
        highest this gateway has seen for the list anywhere (one signed list is published to every
        repository the verifier attested in, so equal is fine there): an older list is a rollback.
        """
        try:
            manifest = parse_manifest(raw, "status list manifest")
        except UsageError as exc:
            return [(reasons.MANIFEST_INVALID, str(exc))], {}
        if manifest.artifact_type != ARTIFACT_STATUS_LIST:
            return [(reasons.STATUS_INVALID, f"tag {tag} holds status lists ({ARTIFACT_STATUS_LIST}) only, "
                                       f"not {manifest.artifact_type}")], {}
        layer = credential_layer(manifest)
        if layer is None:
            return [(reasons.STATUS_INVALID, "expected exactly one application/vc status list layer")], {}
        st = self.store(repository)
        try:
            doc = parse_json(st.fetch_blob(layer.digest, MAX_STATUS_LIST_BYTES), f"status list {layer.digest}")
            sequence = statuslist.list_sequence(doc)
            list_url = str(doc.get("id")) if isinstance(doc, dict) else ""
            if status_tag(list_url) != tag:
                raise UsageError(f"the list's id {list_url[:80]} belongs under {status_tag(list_url)}, not {tag}")
        except NotFoundError:
            return [(reasons.STATUS_INVALID, f"status list blob {layer.digest} is not in {repository}; "
                                       "upload blobs before the manifest")], {}
        except AcxError as exc:
            return [(reasons.STATUS_INVALID, str(exc))], {}
        issuer = issuer_id(doc)
        try:
            found = fetch_status_list(st, list_url)
        except AcxError:
            found = None  # an unreadable list upstream says nothing; a sound one may replace it
        seen = self.history.highest(list_url, issuer) if issuer is not None else 0
        owners: frozenset[str] = frozenset()
        if found is None or issuer_id(found[0]) != issuer:  # a new place, or someone else's list there: whose?
            creds, whole = repository_credentials(st, self.credential_memo)
            owners = list_owners(creds, functools.partial(names_status_tag, tag), self.config.trust,
                                 self.config.clock())
            trust = self.config.trust
            if not owners and not whole:  # the search was cut short: only the trust file can say whose it is
                there_issuer = issuer_id(found[0]) if found is not None else None
                if not (issuer and trust is not None and trust.is_trusted_verifier(issuer)) or \
                        (there_issuer is not None and trust.is_trusted_verifier(there_issuer)):
                    return [(reasons.STATUS_INVALID, f"whose place {tag} is cannot be told: {repository} is larger "
                                                     f"than the search for the credentials naming it "
                                                     f"({MAX_OWNER_READS} reads); only a verifier this gateway's "
                                                     "trust file names may push a list to a new place here, or to "
                                                     "one an untrusted issuer holds")], {}
                owners = frozenset({issuer})
        verdict = may_replace(doc, found[0] if found is not None else None, self.config.trust, self.config.clock(),
                              highest_seen=seen, there_name=f"the list at {tag}", owners=owners)
        detail = {"statusList": list_url, "issuer": issuer, "pushedSequence": sequence,
                  "upstreamSequence": verdict.there or 0, "highestSequenceSeen": seen}
        if verdict.code == reasons.STATUS_ROLLBACK:
            return [(reasons.STATUS_ROLLBACK, f"status list {list_url} with {statuslist.SEQUENCE} {sequence} is "
                                              f"not newer than the one upstream ({statuslist.SEQUENCE} "
                                              f"{verdict.there or 0}; highest seen {seen}): putting back an older "
                                              "list is a rollback")], detail
        if not verdict.ok:
            return [(verdict.code, f"status list {list_url}: {verdict.reason}")], {}
        return [], detail

    def accepted_status_push(self, detail: dict[str, Any]) -> None:
        """Remember the sequence of a status list the upstream accepted (so deleting the tag cannot reset it)."""
        self.history.remember(str(detail["statusList"]), str(detail["issuer"]), int(detail["pushedSequence"]),
                              self.config.clock())

    def record_referrer(self, repository: str, raw: bytes, subject_digest: str, own_tag: bool) -> None:
        """Keep the fallback index (and an attestation's own tag) up to date on an upstream without the API."""
        st = self.store(repository)
        if api_support(st.host) or referrers_api(st, subject_digest, None) is not None:
            return  # the upstream indexes the subject itself (without saying OCI-Subject, as ggcr does)
        desc = referrer_descriptor(raw)
        if own_tag:
            st.push_manifest(raw, desc.media_type, referrer_tag(desc.digest, subject_digest))
        st.write_referrers_index(subject_digest, [desc])

    def referrers_index(self, repository: str, digest: str, artifact_type: str | None) -> tuple[bytes, str | None]:
        """The referrers index the gateway serves, and which path the store took (the API or the fallback).

        Image-index referrers that the listing gives without a type (go-containerregistry lists an index's
        config-less entry bare) are read for their ``artifactType`` and annotations before the filter applies.
        """
        st = self.store(repository)
        refs, source = list_referrers(st, digest, None)
        refs = typed_index_referrers(st, refs, digest)
        if source == "api":  # (the fallback path reads the manifests it lists already)
            refs = annotated_referrers(st, refs, digest)
        if artifact_type is not None:
            refs = [d for d in refs if d.artifact_type == artifact_type]
        return build_index(refs), source


def list_referrers(st: RegistryStore, digest: str, artifact_type: str | None) -> tuple[list[Descriptor], str | None]:
    """The gateway's only referrers listing: the descriptors and the path the store took (api/fallback)."""
    listing = st.referrers(digest, artifact_type)
    return listing.descriptors, listing.source


def manifest_refs(raw: bytes) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(blob digests, child manifest digests) a manifest or index names; well-formed digests only."""
    try:
        doc = loads_ijson(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # (nested past the stack: unreadable, like malformed)
        return (), ()
    if not isinstance(doc, dict):
        return (), ()
    blobs: list[Any] = []
    cfg = doc.get("config")
    if isinstance(cfg, dict):
        blobs.append(cfg.get("digest"))
    layers = doc.get("layers")
    if isinstance(layers, list):
        # a descriptor with ``urls`` (a foreign layer) is fetched from there, and a registry takes it without the
        # blob: recorded, it would let anyone flood the blob ledger for free (see gateway.blobs)
        blobs.extend(d.get("digest") for d in layers if isinstance(d, dict) and not d.get("urls"))
    kids = doc.get("manifests")
    children = [d.get("digest") for d in kids if isinstance(d, dict)] if isinstance(kids, list) else []
    return (tuple(dict.fromkeys(b for b in blobs if isinstance(b, str) and is_digest(b))),
            tuple(dict.fromkeys(c for c in children if isinstance(c, str) and is_digest(c))))


#: What :func:`artifact_type_of` says of bytes it cannot read as I-JSON. Not "no type": Go clients read bad UTF-8,
#: a lone surrogate, a duplicate member or 10,000 levels, and may see a cartridge there that nobody judged.
UNREADABLE = "(unreadable)"


def artifact_type_of(raw: bytes) -> str | None:
    """The type resolve would read (``artifactType``, else ``config.mediaType``); None for an index or an
    untyped manifest, :data:`UNREADABLE` for bytes that are not I-JSON."""
    try:
        doc = loads_ijson(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # (nested past the stack: unreadable, like malformed)
        return UNREADABLE
    if not isinstance(doc, dict) or doc.get("mediaType", MEDIA_MANIFEST) != MEDIA_MANIFEST:
        return None
    at = doc.get("artifactType")
    if isinstance(at, str):
        return at
    cfg = doc.get("config")
    mt = cfg.get("mediaType") if isinstance(cfg, dict) else None
    return mt if isinstance(mt, str) else None
