"""The cartridge's attempt-record referrers, fetched for resolve under the same bounds as its attestations."""

from __future__ import annotations

from dataclasses import dataclass

from acx_oci.errors import AcxError, DeadlineExceeded
from acx_oci.evaluation import FLOOR, FetchedRecord
from acx_oci.jsonio import parse_json
from acx_oci.oci import ANNOTATION_CREATED, ARTIFACT_ATTEMPT_RECORD, MEDIA_ATTEMPT_RECORD, Descriptor, Store
from acx_oci.services.consumer.resolve_fetch import ResolveLimits, time_bound_note
from acx_oci.timeutil import WORK_PER_REFERRER, Deadline, deadline_scope, parse_datetime

MAX_ATTEMPT_RECORD_BYTES = 64 * 1024


@dataclass(frozen=True)
class FetchedRecords:
    """The attempt-record referrers fetched (bounded like attestations) and what the bounds said."""

    records: tuple[FetchedRecord, ...] = ()
    notes: tuple[str, ...] = ()
    partial: bool = False


def _fetch_record(store: Store, desc: Descriptor, subject: str) -> FetchedRecord | None:
    """One attempt record's JSON, or None when it is not one of ``subject`` (judged by the fetched manifest)."""
    manifest = store.fetch_manifest(desc.digest)
    layers = [d for d in manifest.layers if d.media_type == MEDIA_ATTEMPT_RECORD]
    if manifest.artifact_type != ARTIFACT_ATTEMPT_RECORD or manifest.subject is None \
            or manifest.subject.digest != subject or len(layers) != 1:
        return None
    raw = store.fetch_blob(layers[0].digest, MAX_ATTEMPT_RECORD_BYTES, size=layers[0].size)
    return FetchedRecord(desc.digest, parse_json(raw, f"attempt record {layers[0].digest}"))


def fetch_attempt_records(store: Store, subject: str, lim: ResolveLimits, deadline: Deadline) -> FetchedRecords:
    """The cartridge's attempt-record referrers, newest ``max_referrers`` of them; one that fails is skipped
    (it could only have counted against the cartridge, and an unreadable record proves no attempt)."""
    notes: list[str] = []
    try:
        listing = store.referrers(subject, ARTIFACT_ATTEMPT_RECORD)
    except DeadlineExceeded:
        return FetchedRecords((), (time_bound_note(deadline) + " (while listing attempt records)",), True)
    except AcxError as exc:
        return FetchedRecords((), (f"attempt records could not be listed: {exc}",), True)
    refs = list(listing.descriptors)  # each is judged by its fetched manifest, not by the listing
    partial = listing.partial
    if len(refs) > lim.max_referrers:
        refs = sorted(refs, key=lambda d: (parse_datetime(d.annotations.get(ANNOTATION_CREATED)) or FLOOR,
                                           d.digest), reverse=True)[: lim.max_referrers]
        partial = True
        notes.append(f"only the newest {lim.max_referrers} attempt records were read (--max-referrers)")
    deadline.allow("attempt records", len(refs), WORK_PER_REFERRER)
    out: list[FetchedRecord] = []
    budget = lim.max_bytes
    with deadline_scope(deadline):
        for desc in refs:
            if deadline.expired() or budget <= 0:
                partial = True
                notes.append("a bound was hit while reading attempt records: the history may be incomplete")
                break
            try:
                got = _fetch_record(store, desc, subject)
            except DeadlineExceeded:
                continue
            except AcxError as exc:
                notes.append(f"attempt record {desc.digest}: {exc}")
                continue
            if got is not None:
                budget -= MAX_ATTEMPT_RECORD_BYTES
                out.append(got)
    return FetchedRecords(tuple(out), tuple(notes), partial)
