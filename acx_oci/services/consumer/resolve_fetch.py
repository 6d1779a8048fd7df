"""Gathering every byte resolve decides on: in parallel, bounded in count, bytes and time.

List the cartridge's attestations (:func:`list_attestations`), fetch each one's
manifest, credential and records, every copy of the status list it points at and
the sequence this consumer remembers for that list (:func:`gather`); the result is
a :class:`~acx_oci.evaluation.judge.Material` that the pure judge decides on.

The time bound is a :class:`~acx_oci.timeutil.Deadline` entered as the ambient
scope of every fetch, so the registry transport cuts a fetch in flight when it
passes (a trickling registry cannot hold a worker); the pool is then abandoned,
not joined, and what was not judged by then makes the result ``partial``.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import dataclass, field, replace
from typing import Any

from acx_oci import reasons
from acx_oci.errors import AcxError, ByteBoundReached, DeadlineExceeded, IntegrityError, SchemaError, ShapeError
from acx_oci.evaluation.judge import FLOOR, FetchedAttestation, Material, StatusKey, status_url
from acx_oci.jsonio import loads_claims, parse_json, too_many_containers
from acx_oci.model.credential import issuer_id
from acx_oci.oci.model import (
    ANNOTATION_CREATED,
    ARTIFACT_ATTESTATION,
    Descriptor,
    Manifest,
)
from acx_oci.oci.store import ReferrerListing, Store
from acx_oci.services.artifacts.attestation import (
    ANN_CAPABILITY,
    MAX_CREDENTIAL_BYTES,
    MAX_RECORDS_BYTES,
    credential_layer,
    evidence_layers,
    fetch_status_list,
    records_layer,
    split_records,
)
from acx_oci.services.consumer.resolve_phases import Phases
from acx_oci.services.consumer.statuscache import StatusHistory
from acx_oci.timeutil import WORK_PER_REFERRER, Deadline, deadline_scope, parse_datetime
from acx_oci.tlog.proof import MAX_PROOF_DOC
from acx_oci.tlog.proof import MEDIA_TYPE as LOG_PROOF_MEDIA_TYPE

DEFAULT_MAX_REFERRERS = 1000
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
DEFAULT_DEADLINE = 300.0
#: Objects and arrays a credential may hold (one of 90 games has about 200; 16,384 allow some 8,000 games):
#: each one parsed is about 100 bytes of Python, kept until the resolve has judged every credential.
MAX_CREDENTIAL_CONTAINERS = 16_384


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
    evidence_order: tuple[str, ...] = ()  # the game-record layers, in layer order (the old layout)
    bundle: Descriptor | None = None  # the one game-records layer (the current layout)
    evidence: dict[str, bytes] | None = None
    codes: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    size: int = 0
    cut: bool = False  # the deadline passed mid-fetch: not judged, the result is partial
    over: bool = False  # the byte bound was reached mid-fetch: not judged, the result is partial
    log_proof: bytes | None = None  # the log-proof layer (judged by acx_oci.evaluation.log_check)
    credential_raw: bytes | None = None  # set when ``credential`` is only the lax parse of its claims
    records_bundled: bool = False  # one game-records layer, not fetched (see FetchedAttestation)


class BlobMemo:
    """Blobs fetched once per resolution, by (digest, size), and counted once against the byte bound.

    Hundreds of tiny referrer manifests naming one 2 MiB credential blob would otherwise be fetched (and counted)
    hundreds of times, exhausting the byte bound before the honest attestation is judged. The size is part of the
    key: a hostile descriptor naming the honest digest with a wrong size fails on its own, never for the honest one.

    The memo is also the resolution's byte budget at fetch time: the judge only counts what it has judged, so a
    single manifest listing thousands of distinct evidence blobs would otherwise all be read into memory first.
    Once ``max_bytes`` have been read no new fetch starts (overshoot: one capped fetch per worker).
    """

    def __init__(self, max_bytes: int | None = None, phases: Phases | None = None) -> None:
        self._lock = threading.Lock()
        self._blobs: dict[tuple[str, int | None], Future[bytes]] = {}
        self._max = max_bytes
        self.read = 0
        self.phases = phases or Phases()

    def charge(self, n: int) -> None:
        """Count ``n`` bytes read outside the memo (a manifest); raise once the budget is spent."""
        with self._lock:
            self.read += n
        self.phases.count("fetch", 1, n)
        self.check()

    def check(self) -> None:
        """Raise :class:`ByteBoundReached` once more than the budget has been read."""
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
        self.phases.count("fetch", 1, len(data))
        return data, len(data)


def fetch_one(store: Store, desc: Descriptor, subject_digest: str, with_evidence: bool,
              memo: BlobMemo | None = None) -> Fetched:
    """Fetch one attestation's manifest, credential and (``with_evidence``) records; a defect becomes a code."""
    out = Fetched(desc)
    memo = memo or BlobMemo()
    try:
        memo.check()
        manifest = store.fetch_manifest(desc.digest)
        out.size += len(manifest.raw)
        memo.charge(len(manifest.raw))
    except DeadlineExceeded:
        out.cut = True
        return out
    except ByteBoundReached:
        out.over = True
        return out
    except AcxError as exc:
        return _failed(out, exc)
    return fetch_layers(store, manifest, desc.digest, subject_digest, with_evidence, memo, out)


def _failed(out: Fetched, exc: AcxError) -> Fetched:
    """A digest mismatch or a document that is not I-JSON keeps its own code; anything else is a fetch failure."""
    out.codes.append(exc.code if isinstance(exc, IntegrityError | SchemaError) else reasons.FETCH_FAILED)
    out.messages.append(str(exc))
    return out


def fetch_layers(store: Store, manifest: Manifest, digest: str, subject_digest: str, with_evidence: bool,
                 memo: BlobMemo, out: Fetched | None = None) -> Fetched:
    """The attestation ``manifest`` (fetched, or about to be pushed through the gateway) with its layers read:
    credential (bounded in bytes and containers), log proof and (``with_evidence``) records."""
    out = out or Fetched(manifest.descriptor)
    try:
        # judged by what the fetched manifest says (type, annotations), never by what the listing claimed
        out.descriptor = replace(manifest.descriptor, digest=digest)
        if manifest.artifact_type != ARTIFACT_ATTESTATION:
            out.codes.append(reasons.NOT_AN_ATTESTATION)
            out.messages.append(f"artifactType is {manifest.artifact_type}")
            return out
        if manifest.subject is None or manifest.subject.digest != subject_digest:
            out.codes.append(reasons.SUBJECT_MISMATCH)
            out.messages.append(f"the attestation's subject is {manifest.subject.digest if manifest.subject else None},"
                                f" not the cartridge manifest {subject_digest}")
        layer = credential_layer(manifest)
        if layer is None:
            out.codes.append(reasons.SCHEMA_INVALID)
            out.messages.append("the attestation has no single application/vc credential layer")
            return out
        raw, new = memo.fetch(store, layer.digest, MAX_CREDENTIAL_BYTES, layer.size)
        out.size += new
        started = time.perf_counter()
        _read_credential(raw, layer.digest, out)
        proofs = [d for d in manifest.layers if d.media_type == LOG_PROOF_MEDIA_TYPE]
        if len(proofs) == 1:  # none, or two (ambiguous), is "not logged"
            out.log_proof, new = memo.fetch(store, proofs[0].digest, MAX_PROOF_DOC, proofs[0].size)
            out.size += new
        memo.phases.count("parse", seconds=time.perf_counter() - started)
        _fetch_evidence(store, manifest, out, with_evidence, memo)
    except DeadlineExceeded:
        out.cut = True
    except ByteBoundReached:
        out.over = True
    except AcxError as exc:
        _failed(out, exc)
    return out


def _read_credential(raw: bytes, digest: str, out: Fetched) -> None:
    """Parse the credential's claims (bounded in containers); the judge parses strictly what it tries."""
    if too_many_containers(raw, MAX_CREDENTIAL_CONTAINERS):
        raise ShapeError(f"credential {digest}: schema_invalid: more than {MAX_CREDENTIAL_CONTAINERS} "
                         "objects and arrays")
    doc = loads_claims(raw)  # what it claims, to order the judge's walk; the judge parses strictly what it tries
    if doc is None:
        doc = parse_json(raw, f"credential {digest}")  # not JSON: the strict parser's error, and code
    else:
        out.credential_raw = raw
    out.credential = doc if isinstance(doc, dict) else None
    out.credential_digest = digest
    if out.credential is None:  # judged no further
        out.codes.append(reasons.SCHEMA_INVALID)
        out.messages.append("the credential is not a JSON object")
    # The schema is checked when the judge verifies it (first of every rule): of 1,000 credentials of one
    # claim only the newest that verifies is, and the rest are superseded unverified.


def _fetch_evidence(store: Store, manifest: Manifest, out: Fetched, with_evidence: bool, memo: BlobMemo) -> None:
    """Which records the attestation carries and (``with_evidence``) their bytes, in either layout.

    The one-layer layout says which records it holds only inside the layer: unfetched, every record the
    credential names counts as present, and replay (which fetches the layer) finds out.
    """
    ev_layers = evidence_layers(manifest)
    out.evidence_present = {e.digest for e in ev_layers}
    out.evidence_order = tuple(e.digest for e in ev_layers)
    out.bundle = records_layer(manifest)
    out.records_bundled = out.bundle is not None and not with_evidence  # (the judge reads the credential's names)
    if not with_evidence:
        return
    out.evidence = {}
    if out.bundle is not None:
        raw, new = memo.fetch(store, out.bundle.digest, MAX_RECORDS_BYTES, out.bundle.size)
        out.size += new
        out.evidence.update(split_records(raw))
        out.evidence_present |= set(out.evidence)
    for e in ev_layers:
        out.evidence[e.digest], new = memo.fetch(store, e.digest, MAX_CREDENTIAL_BYTES, e.size)
        out.size += new


def time_bound_note(deadline: Deadline) -> str:
    """The note a resolution carries when its time bound cut it short."""
    bound = f"the time bound ({deadline.seconds:g} s)" if not deadline.is_sized else deadline.describe()
    return f"stopped at {bound}; outstanding fetches were cancelled"


def arrivals(futures: list[Future[Fetched]], deadline: Deadline) -> Iterator[Future[Fetched]]:
    """The futures as they complete, the timeout re-read before every wait: a work-sized deadline moves out
    while the fetches run (bytes received), and ``as_completed`` would still stop at its first reading.

    A done-callback queue, not ``wait(pending, FIRST_COMPLETED)``: that locks every pending future per
    call, O(n²) for n attestations (a tenth of a 1,000-attestation resolve's CPU)."""
    arrived: queue.SimpleQueue[Future[Fetched]] = queue.SimpleQueue()
    for fut in futures:
        fut.add_done_callback(arrived.put)
    for _ in futures:
        while True:
            try:
                fut = arrived.get(timeout=max(deadline.remaining(), 0.001))
                break
            except queue.Empty:
                if deadline.expired():
                    raise FuturesTimeout() from None  # (else the bound moved out meanwhile: wait again)
        yield fut


def fetch_attestations(store: Store, refs: list[Descriptor], subject: str, with_evidence: bool, lim: ResolveLimits,
                       deadline: Deadline, collect: Callable[[Fetched], None],
                       phases: Phases | None = None) -> tuple[int, list[str]]:
    """Fetch ``refs`` on ``lim.workers`` threads and ``collect`` each on this thread as it arrives.

    Returns (how many were collected, notes on any bound hit). At the deadline the
    pool is shut down without waiting: queued fetches are cancelled and the ones
    in flight are cut by their transport guards.
    """
    notes: list[str] = []
    done = 0
    total = 0

    memo = BlobMemo(lim.max_bytes, phases)

    def task(desc: Descriptor) -> Fetched:
        """Fetch one attestation under the resolution's deadline (worker threads start without it)."""
        with deadline_scope(deadline):
            return fetch_one(store, desc, subject, with_evidence, memo)

    pool = ThreadPoolExecutor(max_workers=max(1, lim.workers))
    futures = [pool.submit(task, d) for d in refs]
    try:
        for fut in arrivals(futures, deadline):
            item = fut.result()
            if item.cut or deadline.expired():
                notes.append(time_bound_note(deadline))
                break
            total += item.size
            if item.over:
                notes.append(f"stopped after {max(total, memo.read)} bytes (byte bound {lim.max_bytes})")
                break
            done += 1
            collect(item)
            if total > lim.max_bytes:
                notes.append(f"stopped after {total} bytes (byte bound {lim.max_bytes})")
                break
    except FuturesTimeout:
        notes.append(time_bound_note(deadline))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return done, notes


# --------------------------------------------------------------------------- listing

@dataclass(frozen=True)
class Listed:
    """The attestations to fetch (newest ``max_referrers`` of them) and what the listing said."""

    refs: list[Descriptor]
    seen: int  # how many the store listed, before the bound
    partial: bool
    notes: tuple[str, ...]
    classified: int


def list_attestations(store: Store, subject: str, lim: ResolveLimits, deadline: Deadline) -> Listed:
    """The attestations referring to ``subject``; past ``max_referrers``, only the newest (``partial``)."""
    notes: list[str] = []
    partial = False
    try:
        listing = store.referrers(subject, ARTIFACT_ATTESTATION)
    except DeadlineExceeded:
        listing, partial = ReferrerListing(descriptors=[], source="none", partial=True), True
        notes.append(time_bound_note(deadline) + " (while listing referrers)")
    refs = listing.descriptors
    seen = len(refs)
    notes += listing.notes
    if not partial and listing.partial:
        partial = True
        notes.append("the store hit a bound while listing referrers (tags or pages)")
    if len(refs) > lim.max_referrers:
        refs = sorted(refs, key=lambda d: (parse_datetime(d.annotations.get(ANNOTATION_CREATED)) or FLOOR,
                                           d.digest), reverse=True)
        refs = refs[: lim.max_referrers]
        partial = True
        notes.append(f"{seen} attestations found; only the newest {lim.max_referrers} were checked (--max-referrers)")
    deadline.allow("attestations", len(refs), WORK_PER_REFERRER)  # a work-sized bound grows with the bounded work
    return Listed(refs, seen, partial, tuple(notes), listing.classified)


# --------------------------------------------------------------------------- gathering

StatusFetcher = Callable[[str], dict[str, Any] | None]


@dataclass(frozen=True)
class StatusSources:
    """Where status lists come from besides the cartridge's repository, and what this consumer remembers."""

    supplied: Mapping[str, dict[str, Any]] = field(default_factory=dict)  # user files, by list id
    fetch_remote: StatusFetcher | None = None  # HTTPS, when the network is allowed
    history: StatusHistory | None = None


def supplied_lists(status_lists: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """User-supplied status lists by their ``id`` (the URL credentials name)."""
    return {str(s.get("id")): s for s in status_lists or [] if isinstance(s, dict)}


@dataclass(frozen=True)
class RecordSource:
    """Where one attestation's game records are: old-layout layers, bytes in hand, or the one records layer."""

    layers: tuple[str, ...] = ()
    evidence: dict[str, bytes] | None = None
    bundle: Descriptor | None = None


@dataclass(frozen=True)
class Gathered:
    """What :func:`gather` fetched: the judge's material, the replay's record index, and bound notes."""

    material: Material
    records: dict[str, RecordSource]  # attestation -> where its game records are
    done: int  # how many attestations arrived (and were collected) within the bounds
    status_notes: tuple[str, ...]  # status lists that could not be fetched
    bound_notes: tuple[str, ...]  # a bound hit while fetching: the answer is partial


class _Collector:
    """Runs on the caller's thread as attestations arrive: fetches each new status list and its remembered mark."""

    def __init__(self, store: Store, sources: StatusSources, phases: Phases) -> None:
        self.store, self.sources, self.phases = store, sources, phases
        self.items: list[FetchedAttestation] = []
        self.records: dict[str, RecordSource] = {}
        self.lists: dict[str, tuple[dict[str, Any], ...]] = {}
        self.marks: dict[StatusKey, int] = {}
        self.kept: dict[StatusKey, dict[str, Any]] = {}
        self.notes: list[str] = []

    def __call__(self, item: Fetched) -> None:
        cred = item.credential
        url = status_url(cred) if cred is not None else None
        if cred is not None and url:
            if url not in self.lists:
                with self.phases.timed("status"):
                    self.lists[url] = self.status_candidates(url)
            issuer = issuer_id(cred)
            history = self.sources.history
            if history is not None and issuer is not None and (url, issuer) not in self.marks:
                self.marks[(url, issuer)] = history.highest(url, issuer)
                kept = history.newest(url, issuer)
                if kept is not None:
                    self.kept[(url, issuer)] = kept
        self.records[item.descriptor.digest] = RecordSource(item.evidence_order, item.evidence, item.bundle)
        self.items.append(FetchedAttestation(
            digest=item.descriptor.digest, offered=item.descriptor.annotations.get(ANN_CAPABILITY, ""),
            credential=cred, credential_digest=item.credential_digest,
            evidence_present=frozenset(item.evidence_present), evidence=item.evidence,
            codes=tuple(item.codes), messages=tuple(item.messages), log_proof=item.log_proof,
            credential_raw=item.credential_raw, records_bundled=item.records_bundled))

    def status_candidates(self, url: str) -> tuple[dict[str, Any], ...]:
        """Every list published for ``url``: the cartridge's repository, user files, HTTPS if allowed."""
        found: list[dict[str, Any]] = []
        try:
            published = fetch_status_list(self.store, url)
            if published:
                found.append(published[0])
                self.phases.count("status", 2)  # its manifest and its one layer
        except AcxError as exc:
            self.notes.append(f"status list {url}: {exc}")
        if url in self.sources.supplied:
            found.append(self.sources.supplied[url])
        if self.sources.fetch_remote is not None:
            try:
                remote = self.sources.fetch_remote(url)
                if remote is not None:
                    found.append(remote)
                    self.phases.count("status", 1)
            except AcxError as exc:
                self.notes.append(f"status list {url}: {exc}")
        return tuple(found)


def gather(store: Store, refs: list[Descriptor], subject: str, with_evidence: bool, lim: ResolveLimits,
           deadline: Deadline, sources: StatusSources, phases: Phases | None = None) -> Gathered:
    """Fetch every attestation in ``refs`` and the status lists they name, under ``lim`` and ``deadline``."""
    phases = phases or Phases()
    collect = _Collector(store, sources, phases)
    done, bound_notes = fetch_attestations(store, refs, subject, with_evidence, lim, deadline, collect, phases)
    material = Material(tuple(collect.items), collect.lists, collect.marks, collect.kept)
    return Gathered(material, collect.records, done, tuple(collect.notes), tuple(bound_notes))


def material_of(store: Store, items: list[Fetched], sources: StatusSources) -> Material:
    """The judge's input for attestations fetched one by one (the gateway's push check), built as :func:`gather`
    builds it: the same status-list copies, remembered sequence and kept list."""
    collect = _Collector(store, sources, Phases())
    for item in items:
        collect(item)
    return Material(tuple(collect.items), collect.lists, collect.marks, collect.kept)
