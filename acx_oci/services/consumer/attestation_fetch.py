"""Fetching one attestation: its manifest, credential (bounded in bytes and containers), log proof and records.

Split from :mod:`acx_oci.services.consumer.resolve_fetch` (which fetches many in parallel, bounded in time)
so every reader of an attestation reads it alike: ``resolve``, the gateway's push check (a manifest about to
be PUT) and ``vc verify`` (a credential file) hand the judge the same :class:`FetchedAttestation`.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field, replace

from acx_oci import reasons
from acx_oci.crypto import sha256_digest
from acx_oci.errors import AcxError, ByteBoundReached, DeadlineExceeded, IntegrityError, SchemaError, ShapeError
from acx_oci.evaluation import FetchedAttestation
from acx_oci.jsonio import too_many_containers
from acx_oci.model import LevelCredential
from acx_oci.oci import ARTIFACT_ATTESTATION, MEDIA_VC, Descriptor, Manifest, Store
from acx_oci.services.artifacts import (
    ANN_CAPABILITY,
    MAX_CREDENTIAL_BYTES,
    MAX_RECORDS_BYTES,
    credential_layer,
    evidence_layers,
    records_layer,
    split_records,
)
from acx_oci.services.consumer.resolve_phases import Phases
from acx_oci.tlog import MAX_PROOF_DOC
from acx_oci.tlog import MEDIA_TYPE as LOG_PROOF_MEDIA_TYPE

#: Objects and arrays a credential may hold (one of 90 games has about 200; 16,384 allow some 8,000 games):
#: each one parsed is about 100 bytes of Python, kept until the resolve has judged every credential.
MAX_CREDENTIAL_CONTAINERS = 16_384


@dataclass
class Fetched:
    """One attestation as fetched on a worker thread, judged later on the caller's."""

    descriptor: Descriptor
    credential: LevelCredential | None = None  # read at the door (:meth:`LevelCredential.claims`)
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
    # what it claims, to order the judge's walk; the judge parses strictly what it tries (not JSON: the strict
    # parser's error, and code)
    out.credential = LevelCredential.claims(raw, f"credential {digest}")
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


def attestation_of(item: Fetched) -> FetchedAttestation:
    """What the judge reads of one fetched attestation."""
    return FetchedAttestation(
        digest=item.descriptor.digest, offered=item.descriptor.annotations.get(ANN_CAPABILITY, ""),
        credential=item.credential, credential_digest=item.credential_digest,
        evidence_present=frozenset(item.evidence_present), evidence=item.evidence,
        codes=tuple(item.codes), messages=tuple(item.messages), log_proof=item.log_proof,
        records_bundled=item.records_bundled)


def credential_file(raw: bytes, evidence: dict[str, bytes] | None, log_proof: bytes | None) -> FetchedAttestation:
    """A credential file judged as an attestation carrying ``evidence`` (``vc verify``), read as resolve reads a
    credential layer (the same container bound); no ``evidence``: every record it names counts as present."""
    digest = sha256_digest(raw)
    out = Fetched(Descriptor(MEDIA_VC, digest, len(raw)), log_proof=log_proof)
    try:
        _read_credential(raw, digest, out)
    except AcxError as exc:
        _failed(out, exc)
    if evidence is None:
        out.records_bundled = True
    else:
        out.evidence, out.evidence_present = dict(evidence), set(evidence)
    return attestation_of(out)
