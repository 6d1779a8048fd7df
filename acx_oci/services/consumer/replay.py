"""Fetch the game records of the credentials that decide an answer and replay them.

The pure comparison lives in :mod:`acx_oci.evaluation.replay`; this module
gets the bytes (the attestation's DSSE layers, digest-verified by the store,
or the envelope a credential carries inline), in parallel and deduplicated
across credentials, and keeps a bounded in-process cache of verdicts keyed by
the credential digest (plus the attestation's record layers and the issuer
keys the verdict was reached with), so a gateway or a long-lived process
replays each credential once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from acx_oci.crypto import canonical
from acx_oci.errors import AcxError, IntegrityError, SchemaError
from acx_oci.evaluation import (
    NAME,
    Check,
    KeyResolver,
    bad,
    inline_record,
    offline_keys,
    record_digests,
    replay_credential,
)
from acx_oci.model import LevelCredential
from acx_oci.model.level_credential import level_credential
from acx_oci.oci import Descriptor, Store
from acx_oci.services.artifacts import MAX_CREDENTIAL_BYTES, MAX_RECORDS_BYTES, split_records
from acx_oci.timeutil import current_deadline, deadline_scope
from acx_oci.trust import Trust

MAX_CACHED_VERDICTS = 4096
_CacheKey = tuple[str, tuple[bytes, ...], tuple[str, ...]]
_cache: OrderedDict[_CacheKey, Check] = OrderedDict()
_lock = threading.Lock()


@dataclass(frozen=True)
class ReplayJob:
    """One credential to replay: its digest, the attestation's record layers, any bytes already fetched."""

    key: str  # the caller's handle (e.g. the attestation digest)
    credential: LevelCredential  # read at the door (a plain dict is refused: TypeError)
    credential_digest: str
    layer_digests: tuple[str, ...]
    evidence: dict[str, bytes] | None = None
    bundle: Descriptor | None = None  # the one game-records layer (the current layout), fetched when needed

    def __post_init__(self) -> None:
        level_credential(self.credential, f"replay job {self.key}")


def clear_cache() -> None:
    """Forget every cached replay verdict (tests, and a trust change in a long-lived process)."""
    with _lock:
        _cache.clear()


def cached_verdicts() -> int:
    """How many replay verdicts the process cache holds."""
    with _lock:
        return len(_cache)


def _cache_get(key: _CacheKey) -> Check | None:
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
        return hit


def _cache_put(key: _CacheKey, verdict: Check) -> None:
    with _lock:
        _cache[key] = verdict
        _cache.move_to_end(key)
        while len(_cache) > MAX_CACHED_VERDICTS:
            _cache.popitem(last=False)


def issuer_keys(credential: LevelCredential, resolve_keys: KeyResolver) -> list[bytes]:
    """The issuer's assertion keys as ``resolve_keys`` gives them (offline: the trust file; online: did:web too)."""
    issuer = credential.issuer
    if issuer is None:
        return []
    try:
        return [key for _, key in resolve_keys(issuer)]
    except AcxError:
        return []


Bundles = dict[str, "dict[str, bytes] | AcxError | None"]


def _fetch_bundles(store: Store, jobs: Sequence[ReplayJob], tally: Callable[[int], None] | None) -> Bundles:
    """Each game-records layer the jobs need, fetched once: its envelopes by digest, the error that refused
    its document, or None when it could not be fetched (transient: the verdict is not cached)."""
    out: Bundles = {}
    for job in jobs:
        b = job.bundle
        if b is None or b.digest in out:
            continue
        try:
            raw = store.fetch_blob(b.digest, MAX_RECORDS_BYTES, size=b.size)
            if tally is not None:
                tally(len(raw))
            out[b.digest] = split_records(raw)
        except (SchemaError, IntegrityError) as exc:
            out[b.digest] = exc
        except AcxError:
            out[b.digest] = None
    return out


def _planned(job: ReplayJob, bundles: Bundles) -> list[tuple[str | None, bytes | None, bool]]:
    """Per evidence item: (digest, bytes in hand, must fetch from the store)."""
    items = job.credential.evidence
    layers = set(job.layer_digests)
    got = bundles.get(job.bundle.digest) if job.bundle is not None else None
    in_bundle = got if isinstance(got, dict) else {}
    out: list[tuple[str | None, bytes | None, bool]] = []
    for i, digest in enumerate(record_digests(job.credential)):
        inline = inline_record(items[i]) if i < len(items) else None
        if digest is None:
            out.append((None, None, False))
        elif inline is not None:
            try:
                out.append((digest, canonical(inline), False))
            except AcxError:
                out.append((digest, None, False))
        elif job.evidence is not None and digest in job.evidence:
            out.append((digest, job.evidence[digest], False))
        elif digest in in_bundle:
            out.append((digest, in_bundle[digest], False))
        else:
            out.append((digest, None, digest in layers))
    return out


def replay_jobs(store: Store, jobs: Sequence[ReplayJob], trust: Trust, now: datetime, *, workers: int = 8,
                resolve_keys: KeyResolver | None = None,
                tally: Callable[[int], None] | None = None) -> dict[str, Check]:
    """Replay every job (records fetched in parallel, deduplicated); ``{job.key: verdict}``.

    ``tally(n)`` is called for each blob fetched, with its size (the phase report's counts).

    ``now`` is kept for callers' symmetry with verification; a replay's verdict does not depend on it.
    """
    keys_of = resolve_keys or offline_keys(trust)
    verdicts: dict[str, Check] = {}
    todo: list[tuple[ReplayJob, _CacheKey, list[bytes]]] = []
    keys_by_issuer: dict[str | None, list[bytes]] = {}
    for job in jobs:
        issuer = job.credential.issuer
        if issuer not in keys_by_issuer:
            keys_by_issuer[issuer] = issuer_keys(job.credential, keys_of)
        keys = keys_by_issuer[issuer]
        bundle_digest = (job.bundle.digest,) if job.bundle is not None else ()
        ck: _CacheKey = (job.credential_digest, tuple(sorted(keys)), (*job.layer_digests, *bundle_digest))
        hit = _cache_get(ck)
        if hit is not None:
            verdicts[job.key] = hit
        else:
            todo.append((job, ck, keys))
    if not todo:
        return verdicts
    bundles = _fetch_bundles(store, [job for job, _, _ in todo], tally)
    plans = {job.key: _planned(job, bundles) for job, _, _ in todo}
    wanted = sorted({d for plan in plans.values() for d, raw, fetch in plan if fetch and raw is None and d})
    fetched: dict[str, bytes | None] = {}
    deadline = current_deadline()  # worker threads start with an empty context: carry it over

    def get(digest: str) -> tuple[str, bytes | None]:
        """One record's bytes, or None when it cannot be fetched (its replay then fails)."""
        try:
            with deadline_scope(deadline):
                data = store.fetch_blob(digest, MAX_CREDENTIAL_BYTES)
            if tally is not None:
                tally(len(data))
            return digest, data
        except AcxError:
            return digest, None

    if wanted:
        if len(wanted) == 1 or workers <= 1:
            fetched = dict(map(get, wanted))
        else:
            with ThreadPoolExecutor(max_workers=min(workers, len(wanted))) as pool:
                fetched = dict(pool.map(get, wanted))
    for job, ck, keys in todo:
        plan = plans[job.key]
        records = [raw if raw is not None else (fetched.get(d) if d and fetch else None) for d, raw, fetch in plan]
        where = job.bundle.digest if job.bundle is not None else ""
        bundle = bundles.get(where) if where else None
        if isinstance(bundle, AcxError):
            verdict = bad(NAME, bundle.code, f"the game-records layer {where}: {bundle}")
        else:
            # a records layer that could not be fetched says nothing about which records it holds
            layers = None if where and bundle is None else (*job.layer_digests, *(bundle or {}))
            verdict = replay_credential(job.credential, records, keys, layer_digests=layers)
        verdicts[job.key] = verdict
        transient = any(fetch and fetched.get(d or "") is None for d, raw, fetch in plan if raw is None) or (
            job.bundle is not None and bundle is None)
        if not transient:
            _cache_put(ck, verdict)
    return verdicts
