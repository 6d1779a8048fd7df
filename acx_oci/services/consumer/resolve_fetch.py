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
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import dataclass, field
from typing import Any

from acx_oci.errors import AcxError, DeadlineExceeded
from acx_oci.evaluation import FLOOR, FetchedAttestation, Material, StatusKey, status_url
from acx_oci.model import issuer_id
from acx_oci.oci import ANNOTATION_CREATED, ARTIFACT_ATTESTATION, Descriptor, ReferrerListing, Store
from acx_oci.services.artifacts import fetch_status_list
from acx_oci.services.consumer.attestation_fetch import BlobMemo, Fetched, attestation_of, fetch_one
from acx_oci.services.consumer.resolve_phases import Phases
from acx_oci.services.consumer.statuscache import StatusHistory
from acx_oci.timeutil import WORK_PER_REFERRER, Deadline, deadline_scope, parse_datetime

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
        self.items.append(attestation_of(item))

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
