"""What ``acx-oci state rebuild`` reads: the verifier's transparency log and the repositories it published in.

Only what the verifier itself signed is believed: the log's checkpoint must verify with the verifier's key
(so every entry in it is the verifier's), and a credential, attempt record or status list found in a
repository counts only when its proof verifies with that key under the verifier's DID. A publisher can
delete what sits in its repository, never forge it, so the log is the source of the attempt history and
the repositories add what the log does not say: credential ids, status-list indices, revoked bits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acx_oci.crypto import Identity, dataintegrity, sha256_digest
from acx_oci.errors import AcxError, NotFoundError, UsageError
from acx_oci.jsonio import parse_json
from acx_oci.model import credential as cred_mod
from acx_oci.model import statuslist
from acx_oci.oci import (
    ARTIFACT_ATTEMPT_RECORD,
    ARTIFACT_ATTESTATION,
    MEDIA_ATTEMPT_RECORD,
    REFERRER_TAG_PREFIX,
    Store,
    StoreOptions,
    open_store,
    parse_reference,
)
from acx_oci.services.artifacts import (
    CHECKPOINT,
    MAX_CREDENTIAL_BYTES,
    STATUS_TAG_PREFIX,
    LogReader,
    credential_layer,
    fetch_status_list,
)
from acx_oci.services.verifier.log_publish import later_publications
from acx_oci.services.verifier.log_tree import LOG_DIR, TransLog, Witness, write_atomic
from acx_oci.services.verifier.rebuild_fresh import Freshness, ask_witnesses, proof_size
from acx_oci.tlog import MAX_PROOF_DOC, bundles_for_size, ed25519_verifier, tiles_for_size, verify_tiles
from acx_oci.tlog import MEDIA_TYPE as MEDIA_LOG_PROOF
from acx_oci.urls import without_fragment

Progress = Callable[[str], None]
MAX_RECORD_BYTES = 64 * 1024
MAX_TAGS = 10_000  # tags looked at per repository: a bound, reported when hit
# registry reads per repository (a subject's referrer listing, a document's manifest and blob): a repository
# that floods every tag with referrers would otherwise keep the rebuild fetching for days; reported when hit
MAX_READS = 100_000


@dataclass(frozen=True)
class FoundSigned:
    """A credential or attempt record this verifier signed, found in a repository."""

    kind: str  # "credential" or "attempt-record"
    doc: dict[str, Any]
    digest: str  # sha256 of its exact bytes: what the log's attempt entry names as recordDigest
    repository: str
    subject: str  # the cartridge manifest it refers to
    referrer: str  # the attestation (or attempt record) manifest's digest


@dataclass(frozen=True)
class ListCopy:
    """A copy of one of the verifier's status lists, verified, and where it was found."""

    url: str
    doc: dict[str, Any]
    sequence: int
    location: str  # REGISTRY/REPO:acx-status-<uuid>, as attest records it
    digest: str


@dataclass
class Scan:
    """Everything found: log entries (in log order), signed documents by digest, list copies, what was skipped."""

    log_entries: list[dict[str, Any]] = field(default_factory=list)
    log_size: int = 0
    log_origin: str | None = None
    log_root: bytes = b""
    signed: dict[str, FoundSigned] = field(default_factory=dict)
    lists: list[ListCopy] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    fresh: Freshness = field(default_factory=Freshness)  # whether the served checkpoint is the newest published
    proof_sizes: list[tuple[int, str]] = field(default_factory=list)  # (log size a found log proof shows, where)


def restore_log(repository: str, options: StoreOptions, verifier: Identity, state_dir: Path,
                origin: str | None, scan: Scan, progress: Progress, witnesses: Sequence[Witness] = ()) -> TransLog:
    """Copy the published log (checkpoint, tiles, entry bundles) into ``STATE/log`` and reopen it with the
    verifier's key: the checkpoint must be this key's and the tiles must lead to its root (else UsageError).
    What shows a longer log (later ``tiles-<N>`` tags, a witness's bigger tree) goes to ``scan.fresh``."""
    with open_store(parse_reference(repository), options) as store:
        reader = LogReader(store)
        try:
            head = reader.head()
        except NotFoundError:
            raise UsageError(f"state rebuild --log {repository}: no log is published there (no checkpoint tag)") \
                from None
        origin = origin or head.checkpoint.origin
        try:  # the size is signed before it decides how much is fetched
            reader.verify(ed25519_verifier(origin, verifier.public_bytes))
        except AcxError as exc:
            raise UsageError(f"state rebuild --log {repository}: not this verifier's log ({exc})") from None
        root = state_dir / LOG_DIR
        paths = [t.path for t in (*tiles_for_size(head.checkpoint.size), *bundles_for_size(head.checkpoint.size))]
        for n, path in enumerate(paths, 1):  # the tree's own paths only: extra index entries are never fetched
            write_atomic(root / path, reader.fetch(path))
            if n % 64 == 0:
                progress(f"log {repository}: {n}/{len(paths)} tiles")
        write_atomic(root / CHECKPOINT, head.note)
        scan.fresh.size = head.checkpoint.size
        scan.fresh.evidence += [f"the log repository holds {t} (a publication of {t.removeprefix('tiles-')} entries)"
                                for t in later_publications(store, head.checkpoint.size)]
    try:
        log = TransLog(state_dir, verifier.private, origin=origin)
    except AcxError as exc:
        raise UsageError(f"state rebuild --log {repository}: not this verifier's log ({exc})") from None
    # Every tile and entry bundle must hash up to the signed root: a bundle swapped under a genuine checkpoint
    # would otherwise drop attempts (cooldowns, counts) or roll back a list's sequence (LogInconsistent).
    for i, raw in enumerate(verify_tiles(log.size, log.tree.root(), log.read)):
        entry = parse_json(raw, f"log entry {i}")
        scan.log_entries.append(entry if isinstance(entry, dict) else {})
    scan.log_size, scan.log_origin, scan.log_root = log.size, log.origin, log.tree.root()
    ask_witnesses(witnesses, head.note, log, scan.fresh)
    progress(f"log {repository}: {log.size} entries, checkpoint verified with the verifier's key")
    return log


def _signed_by(doc: Any, verifier: Identity) -> bool:
    """The document's issuer is the verifier's DID and every proof verifies with the verifier's key."""
    if not isinstance(doc, dict) or cred_mod.issuer_id(doc) != verifier.did:
        return False

    def key(vm: str) -> bytes:
        if without_fragment(vm) not in (verifier.did, verifier.did_key):
            raise UsageError(f"{vm} is not a method of {verifier.did}")
        return verifier.public_bytes

    return dataintegrity.all_ok(dataintegrity.verify(doc, key))


def _subjects(store: Store, scan: Scan, repository: str) -> list[str]:
    """The digests of the repository's tagged manifests (the cartridges), status-list and fallback tags aside."""
    tags = store.list_tags()
    if len(tags) > MAX_TAGS:
        scan.skipped.append(f"{repository}: {len(tags)} tags, only the first {MAX_TAGS} read")
    out: list[str] = []
    for tag in tags[:MAX_TAGS]:
        if tag.startswith((STATUS_TAG_PREFIX, "sha256-", REFERRER_TAG_PREFIX)):  # lists, indexes, referrers
            continue
        digest = store.resolve(tag).digest
        if digest not in out:
            out.append(digest)
    return out


def _read_signed(store: Store, desc: Any, subject: str, repository: str, verifier: Identity,
                 scan: Scan) -> FoundSigned | None:
    manifest = store.fetch_manifest(desc.digest)
    for proof in [d for d in manifest.layers if d.media_type == MEDIA_LOG_PROOF][:4]:
        shown = proof_size(store.fetch_blob(proof.digest, MAX_PROOF_DOC, size=proof.size), verifier, scan.log_origin)
        if shown is not None:  # signed by the verifier's key: how long its log was when this was published
            scan.proof_sizes.append((shown, f"{repository}@{desc.digest}"))
    if desc.artifact_type == ARTIFACT_ATTESTATION:
        layer, kind, limit = credential_layer(manifest), "credential", MAX_CREDENTIAL_BYTES
    else:
        layers = [d for d in manifest.layers if d.media_type == MEDIA_ATTEMPT_RECORD]
        layer, kind, limit = (layers[0] if len(layers) == 1 else None), "attempt-record", MAX_RECORD_BYTES
    if layer is None:
        return None
    raw = store.fetch_blob(layer.digest, limit, size=layer.size)
    doc = parse_json(raw, f"{kind} {layer.digest}")
    if not _signed_by(doc, verifier):
        return None
    return FoundSigned(kind, doc, sha256_digest(raw), repository, subject, desc.digest)


def scan_repository(repository: str, options: StoreOptions, verifier: Identity, scan: Scan,
                    progress: Progress) -> None:
    """Every credential and attempt record the verifier signed about the repository's cartridges, and every
    copy of its status lists there; anything unreadable is named in ``scan.skipped``, never guessed at."""
    ref = parse_reference(repository)
    if ref.tag or ref.digest:
        raise UsageError(f"state rebuild --repository {repository}: a repository (REGISTRY/REPO or oci:DIR), "
                         "without a tag or digest")
    with open_store(ref, options) as store:
        found, reads, read = 0, 0, set[str]()
        for subject in _subjects(store, scan, repository):
            if reads >= MAX_READS:
                break
            listing = store.referrers(subject)
            reads += 1
            if listing.partial:
                scan.skipped.append(f"{repository}@{subject}: the referrer listing was cut short")
            for desc in listing.descriptors:
                if desc.artifact_type not in (ARTIFACT_ATTESTATION, ARTIFACT_ATTEMPT_RECORD) or desc.digest in read \
                        or reads >= MAX_READS:
                    continue
                read.add(desc.digest)  # (a listing may name one document under every subject: read once)
                reads += 2
                try:
                    signed = _read_signed(store, desc, subject, repository, verifier, scan)
                except AcxError as exc:
                    scan.skipped.append(f"{repository}@{desc.digest}: {exc}")
                    continue
                if signed is not None and signed.digest not in scan.signed:
                    scan.signed[signed.digest] = signed
                    found += 1
        if reads >= MAX_READS:
            scan.skipped.append(f"{repository}: {MAX_READS} registry reads, the rest of its referrers not read")
        lists = _lists(store, repository, verifier, scan)
        progress(f"repository {repository}: {found} signed record(s), {lists} status list copy(ies)")


def _lists(store: Store, repository: str, verifier: Identity, scan: Scan) -> int:
    """The verifier's status lists tagged ``acx-status-<uuid>`` in the repository (verified copies only)."""
    count = 0
    for tag in store.list_tags()[:MAX_TAGS]:
        if not tag.startswith(STATUS_TAG_PREFIX):
            continue
        url = f"https://acx.invalid/{tag[len(STATUS_TAG_PREFIX):]}"  # fetch_status_list reads only the UUID
        try:
            got = fetch_status_list(store, url)
        except AcxError as exc:
            scan.skipped.append(f"{repository}:{tag}: {exc}")
            continue
        if got is None or not _signed_by(got[0], verifier):
            continue
        doc, digest = got
        try:
            seq = statuslist.list_sequence(doc)
        except AcxError as exc:
            scan.skipped.append(f"{repository}:{tag}: {exc}")
            continue
        scan.lists.append(ListCopy(str(doc.get("id")), doc, seq, str(store.reference.with_tag(tag)), digest))
        count += 1
    return count
