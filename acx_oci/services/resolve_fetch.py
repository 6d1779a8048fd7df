"""Fetching a cartridge's attestations for resolve: in parallel, bounded in count, bytes and time.

The time bound is a :class:`~acx_oci.timeutil.Deadline` entered as the ambient
scope of every fetch, so the registry transport cuts a fetch in flight when it
passes (a trickling registry cannot hold a worker); the pool is then abandoned,
not joined, and what was not judged by then makes the result ``partial``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import dataclass, field, replace
from typing import Any

from acx_oci.errors import AcxError, ByteBoundReached, DeadlineExceeded, IntegrityError, SchemaError
from acx_oci.evaluation.verify import check_schema
from acx_oci.jsonio import parse_json
from acx_oci.oci.model import ARTIFACT_ATTESTATION, Descriptor
from acx_oci.oci.store import Store
from acx_oci.services.attestation import MAX_CREDENTIAL_BYTES, credential_layer, evidence_layers
from acx_oci.timeutil import Deadline, deadline_scope

DEFAULT_MAX_REFERRERS = 1000
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
DEFAULT_DEADLINE = 300.0


@dataclass
class ResolveLimits:
    """Bounds on one resolution: a registry with a million referrers or a slow one still gets an answer."""

    max_referrers: int = DEFAULT_MAX_REFERRERS
    max_bytes: int = DEFAULT_MAX_BYTES
    deadline_seconds: float = DEFAULT_DEADLINE
    workers: int = 8


@dataclass
class Fetched:
    """One attestation as fetched on a worker thread, judged later on the caller's."""

    descriptor: Descriptor
    credential: dict[str, Any] | None = None
    credential_digest: str | None = None
    evidence_present: set[str] = field(default_factory=set)
    evidence_order: tuple[str, ...] = ()  # the game-record layers, in layer order
    evidence: dict[str, bytes] | None = None
    codes: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    size: int = 0
    cut: bool = False  # the deadline passed mid-fetch: not judged, the result is partial
    over: bool = False  # the byte bound was reached mid-fetch: not judged, the result is partial


class BlobMemo:
    """Blobs fetched once per resolution, by (digest, size), and counted once against the byte bound.

    Hundreds of tiny referrer manifests naming one 2 MiB credential blob would otherwise be fetched (and counted)
    hundreds of times, exhausting the byte bound before the honest attestation is judged. The size is part of the
    key: a hostile descriptor naming the honest digest with a wrong size fails on its own, never for the honest one.

    The memo is also the resolution's byte budget at fetch time: the judge only counts what it has judged, so a
    single manifest listing thousands of distinct evidence blobs would otherwise all be read into memory first.
    Once ``max_bytes`` have been read no new fetch starts (overshoot: one capped fetch per worker).
    """

    def __init__(self, max_bytes: int | None = None) -> None:
        self._lock = threading.Lock()
        self._blobs: dict[tuple[str, int | None], Future[bytes]] = {}
        self._max = max_bytes
        self.read = 0

    def charge(self, n: int) -> None:
        """Count ``n`` bytes read outside the memo (a manifest); raise once the budget is spent."""
        with self._lock:
            self.read += n
        self.check()

    def check(self) -> None:
        if self._max is not None and self.read > self._max:
            raise ByteBoundReached(f"read {self.read} bytes, past the byte bound {self._max}")

    def fetch(self, store: Store, digest: str, cap: int, size: int | None) -> tuple[bytes, int]:
        """The blob's bytes, and how many of them are new to this resolution (0 when fetched before)."""
        with self._lock:
            fut = self._blobs.get((digest, size))
            mine = fut is None
            if fut is None:
                fut = self._blobs[(digest, size)] = Future()
        if not mine:
            return fut.result(), 0  # the owner's fetch is bounded by its transport guard and the deadline
        try:
            self.check()
            data = store.fetch_blob(digest, cap, size=size)
        except BaseException as exc:
            fut.set_exception(exc)
            raise
        fut.set_result(data)
        with self._lock:
            self.read += len(data)
        return data, len(data)


def fetch_one(store: Store, desc: Descriptor, subject_digest: str, with_evidence: bool,
              memo: BlobMemo | None = None) -> Fetched:
    out = Fetched(desc)
    memo = memo or BlobMemo()
    try:
        memo.check()
        manifest = store.fetch_manifest(desc.digest)
        out.size += len(manifest.raw)
        memo.charge(len(manifest.raw))
        # judged by what the fetched manifest says (type, annotations), never by what the listing claimed
        out.descriptor = replace(manifest.descriptor, digest=desc.digest)
        if manifest.artifact_type != ARTIFACT_ATTESTATION:
            out.codes.append("not_an_attestation")
            out.messages.append(f"artifactType is {manifest.artifact_type}")
            return out
        if manifest.subject is None or manifest.subject.digest != subject_digest:
            out.codes.append("subject_mismatch")
            out.messages.append(f"the attestation's subject is {manifest.subject.digest if manifest.subject else None},"
                                f" not the cartridge manifest {subject_digest}")
        layer = credential_layer(manifest)
        if layer is None:
            out.codes.append("schema_invalid")
            out.messages.append("the attestation has no single application/vc credential layer")
            return out
        raw, new = memo.fetch(store, layer.digest, MAX_CREDENTIAL_BYTES, layer.size)
        out.size += new
        doc = parse_json(raw, f"credential {layer.digest}")
        out.credential = doc if isinstance(doc, dict) else None
        out.credential_digest = layer.digest
        schema = check_schema(out.credential) if out.credential is not None else None
        if schema is None or not schema.ok:  # judged no further: one schema_invalid with the schema's message
            out.codes.append("schema_invalid")
            out.messages.append(schema.message if schema else "the credential is not a JSON object")
            out.credential = None
        ev_layers = evidence_layers(manifest)
        out.evidence_present = {e.digest for e in ev_layers}
        out.evidence_order = tuple(e.digest for e in ev_layers)
        if with_evidence:
            out.evidence = {}
            for e in ev_layers:
                out.evidence[e.digest], new = memo.fetch(store, e.digest, MAX_CREDENTIAL_BYTES, e.size)
                out.size += new
    except DeadlineExceeded:
        out.cut = True
    except ByteBoundReached:
        out.over = True
    except AcxError as exc:
        # a digest mismatch or a document that is not I-JSON keeps its own code; anything else is a fetch failure
        code = exc.code if isinstance(exc, IntegrityError | SchemaError) else "fetch_failed"
        out.codes.append(code)
        out.messages.append(str(exc))
    return out


def time_bound_note(deadline: Deadline) -> str:
    return f"stopped at the time bound ({deadline.seconds:g} s); outstanding fetches were cancelled"


def fetch_and_judge(store: Store, refs: list[Descriptor], subject: str, with_evidence: bool, lim: ResolveLimits,
                    deadline: Deadline, judge: Callable[[Fetched], None]) -> tuple[int, list[str]]:
    """Fetch ``refs`` on ``lim.workers`` threads and ``judge`` each on this thread as it arrives.

    Returns (how many were judged, notes on any bound hit). At the deadline the
    pool is shut down without waiting: queued fetches are cancelled and the ones
    in flight are cut by their transport guards.
    """
    notes: list[str] = []
    done = 0
    total = 0

    memo = BlobMemo(lim.max_bytes)

    def task(desc: Descriptor) -> Fetched:
        with deadline_scope(deadline):
            return fetch_one(store, desc, subject, with_evidence, memo)

    pool = ThreadPoolExecutor(max_workers=max(1, lim.workers))
    futures = [pool.submit(task, d) for d in refs]
    try:
        for fut in as_completed(futures, timeout=deadline.remaining()):
            item = fut.result()
            if item.cut or deadline.expired():
                notes.append(time_bound_note(deadline))
                break
            total += item.size
            if item.over:
                notes.append(f"stopped after {max(total, memo.read)} bytes (byte bound {lim.max_bytes})")
                break
            done += 1
            judge(item)
            if total > lim.max_bytes:
                notes.append(f"stopped after {total} bytes (byte bound {lim.max_bytes})")
                break
    except FuturesTimeout:
        notes.append(time_bound_note(deadline))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return done, notes
