"""``acx-oci state rebuild``: a verifier's state directory rebuilt from its transparency log and its registry.

A lost ``--state`` would otherwise reset the anti-gaming memory: cooldowns, attempt counts, the status
lists' sequences and revoked bits. What the verifier signed and published holds all of that, so the
state is rebuilt from it, explicitly (never behind the verifier's back), into a fresh directory that is
moved into place only when complete.

Restored: every attempt in the log (issued and not issued: they start cooldowns and count in
``acx:attempt``), each enriched from the signed credential or attempt record a repository holds (the entry's
``publisher`` keeps the publisher-scoped cooldown and count when the publisher deleted its records); the
status lists (URL, size, issuer), every allocated index of a found credential, every revoked bit of the
newest verified copy, and the sequence (the highest the log or any copy shows, so the next signature is
newer than anything a consumer has seen); where each list was published; the log itself (tiles and
checkpoint, so the next append extends the same tree). Not restored (said in the report and the docs):
refusals (they start no cooldown), a run's start time (the signing time stands in, so a cooldown ends
later by the run's length, never earlier), an attempt stopped before it was logged, the index of an issued
credential no repository holds, revocations signed after the newest copy found, the held-out exposures
(``benchmark exposures``), the cosign projections, the run folders and file publications.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acx_oci import reasons as rc
from acx_oci.crypto import Identity
from acx_oci.errors import AcxError, UsageError
from acx_oci.model import AttemptCount, statuslist
from acx_oci.model import credential as cred_mod
from acx_oci.oci import StoreOptions
from acx_oci.services.artifacts import CHECKPOINT
from acx_oci.services.verifier.ledger import DB_FILE, Ledger
from acx_oci.services.verifier.ledger_attempts import ts
from acx_oci.services.verifier.log import CONFIG_FILE
from acx_oci.services.verifier.log_tree import LOG_DIR, Witness
from acx_oci.services.verifier.rebuild_sources import (
    FoundSigned,
    ListCopy,
    Progress,
    Scan,
    restore_log,
    scan_repository,
)
from acx_oci.timeutil import parse_datetime
from acx_oci.tlog import MAX_NOTE, Checkpoint, parse_checkpoint_text
from acx_oci.tlog import parse as parse_note

NOT_RESTORED = (
    "refusals (they start no cooldown)",
    "run start times: the signing time stands in, so a cooldown ends later by the run's length, never earlier",
    "attempts stopped before they were logged",
    "the status index of an issued credential no repository holds",
    "the publisher key of an attempt whose record no repository holds and whose log entry predates the entry's "
    "publisher field: a publisher-scoped cooldown and the per-publisher count miss that attempt",
    "revocations signed after the newest status-list copy found, or of a list no copy of which is found "
    "(refused unless --allow-older-lists)",
    "why a bit was set: a superseded credential's bit is restored as revoked",
    "held-out exposures (benchmark exposures), cosign projections, run folders and file publications",
    "the log's witnesses (name them again: --witness, or config.json's log.witnesses)",
)


@dataclass
class RebuildReport:
    """What was restored, from where, and what could not be."""

    state_dir: str
    log: str | None
    log_size: int
    repositories: list[str]
    attempts: int = 0
    issued: int = 0
    not_issued: int = 0
    credentials: int = 0
    lists: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The ``state rebuild --json`` document."""
        return {"state": self.state_dir, "log": self.log, "logSize": self.log_size,
                "repositories": self.repositories, "attempts": self.attempts, "issued": self.issued,
                "notIssued": self.not_issued, "credentials": self.credentials, "statusLists": self.lists,
                "warnings": self.warnings, "notRestored": list(NOT_RESTORED)}


def check_target(state_dir: Path, force: bool) -> None:
    """Refuse a non-empty state directory unless ``force``: rebuilding replaces its ledger and log."""
    if state_dir.exists() and not state_dir.is_dir():
        raise UsageError(f"state rebuild: {state_dir} is not a directory")
    if state_dir.is_dir() and any(state_dir.iterdir()) and not force:
        raise UsageError(f"state rebuild: {state_dir} is not empty; rebuilding replaces its ledger and log "
                         "(--force to do so, or name an empty or new directory)")


def rebuild(state_dir: Path, verifier: Identity, *, log: str | None, origin: str | None, repositories: list[str],
            options: StoreOptions, force: bool = False, allow_older: bool = False,
            witnesses: Sequence[Witness] = (), accept_older_checkpoint: bool = False,
            progress: Progress = lambda _: None) -> RebuildReport:
    """Rebuild ``state_dir`` from the log (``log``) and ``repositories``; see the module docstring. A checkpoint
    older than one the verifier published (:mod:`rebuild_fresh`) is refused unless ``accept_older_checkpoint``."""
    if log is None and not repositories:
        raise UsageError("state rebuild: nothing to rebuild from; give --log REPO and/or --repository REPO")
    check_target(state_dir, force)
    tmp = state_dir.parent / f".{state_dir.name}.rebuild-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        scan = Scan()
        if log is not None:
            restore_log(log, options, verifier, tmp, origin, scan, progress, witnesses)
        _keep_own_log(state_dir, log, scan)
        for repo in repositories:
            scan_repository(repo, options, verifier, scan, progress)
        report = RebuildReport(str(state_dir), log, scan.log_size, list(repositories))
        if log is not None:
            fresh = scan.fresh
            fresh.evidence += sorted({f"{where}: a log proof signed by the verifier's key shows {n} entries"
                                      for n, where in scan.proof_sizes if n > scan.log_size})
            report.warnings += fresh.refuse_or_warn(accept_older_checkpoint)
        with Ledger(tmp) as ledger:
            _write(ledger, scan, report, allow_older)
        if log is not None:
            conf: dict[str, Any] = {"log": {"repository": log,
                                            **({"origin": scan.log_origin} if scan.log_origin else {})}}
            if accept_older_checkpoint and scan.fresh.evidence:  # the operator's choice, kept with the state
                conf["acceptedOlderCheckpoint"] = {"size": scan.log_size, "evidence": scan.fresh.evidence,
                                                   "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
            (tmp / CONFIG_FILE).write_text(json.dumps(conf, indent=2) + "\n")
        report.warnings += scan.skipped
        _move_into_place(tmp, state_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    progress(f"state {state_dir}: {report.attempts} attempt(s), {report.credentials} credential(s), "
             f"{len(report.lists)} status list(s)")
    return report


def _own_checkpoint(state_dir: Path) -> Checkpoint | None:
    """The checkpoint of the log the state directory holds now (read, not verified: it is the operator's own)."""
    path = state_dir / LOG_DIR / CHECKPOINT
    if not path.is_file():
        return None
    try:
        return parse_checkpoint_text(parse_note(path.read_bytes()[:MAX_NOTE]).text)
    except (AcxError, OSError, UnicodeDecodeError):
        return None


def _keep_own_log(state_dir: Path, log: str | None, scan: Scan) -> None:
    """Refuse (before anything is replaced) to drop entries the state's own log holds and the published one lacks.

    The log is signed by the verifier's key: a state that forgot entries it signed would sign another tree of the
    same sizes (an equivocation witnesses and consumers detect), and the attempts in those entries would be lost.
    """
    own = _own_checkpoint(state_dir)
    if own is None or own.size == 0:
        return
    if log is None:
        raise UsageError(f"state rebuild: {state_dir} holds a log of {own.size} entries and no --log was given; "
                         "rebuilding would delete it. Name its published copy (--log REPO)")
    if own.size > scan.log_size or (own.size == scan.log_size and own.root != scan.log_root):
        raise UsageError(f"state rebuild: {state_dir}'s own log ({own.size} entries) is not the published one's past "
                         f"({scan.log_size} entries): publish it first (acx-oci log publish) or move it away")


def _move_into_place(tmp: Path, state_dir: Path) -> None:
    """Replace the state's ledger, log and config with the rebuilt ones (other files, e.g. ``runs/``, stay)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    for name in (f"{DB_FILE}-wal", f"{DB_FILE}-shm", DB_FILE, LOG_DIR):
        old = state_dir / name
        if old.is_dir():
            shutil.rmtree(old)
        elif old.exists():
            old.unlink()
    for item in tmp.iterdir():
        os.replace(item, state_dir / item.name)


@dataclass
class _Row:
    """One attempt to restore: the log's entry and/or the signed document found for it."""

    time: datetime
    entry: dict[str, Any] | None
    signed: FoundSigned | None


def _rows(scan: Scan, report: RebuildReport) -> list[_Row]:
    """The attempts, oldest first: each log ``attempt`` entry (with its document when a repository holds it),
    then each signed document the log does not name (a state without a log, or an unlogged publication)."""
    rows: list[_Row] = []
    named: set[str] = set()
    for entry in scan.log_entries:
        if entry.get("kind") != "attempt":
            continue
        digest = str(entry.get("recordDigest"))
        named.add(digest)
        when = parse_datetime(entry.get("time")) or datetime.now(UTC)
        rows.append(_Row(when, entry, scan.signed.get(digest)))
        if entry.get("verdict") == "issued" and digest not in scan.signed:
            report.warnings.append(f"issued credential {digest} (log {entry.get('time')}) is in no repository "
                                   "given: its status index is unknown")
    for digest, signed in scan.signed.items():
        if digest not in named:
            when = parse_datetime(signed.doc.get("validFrom")) or datetime.now(UTC)
            rows.append(_Row(when, None, signed))
    rows.sort(key=lambda r: r.time)
    return rows


def _fields(row: _Row) -> dict[str, Any]:
    """The attempts-table columns one row restores (unknown ones empty: the cooldown needs only the keys)."""
    e, s = row.entry or {}, row.signed
    doc = s.doc if s is not None else {}
    level = cred_mod.level_result(doc) or {} if s is not None and s.kind == "credential" else {}
    if s is not None and s.kind == "credential":
        count = cred_mod.credential_attempt(doc)
        bench_id, bench_version = level.get("acx:benchmarkId", ""), level.get("acx:benchmarkVersion", "")
        manifest, issued = level.get("acx:cartridgeManifestDigest", ""), True
    else:
        count = AttemptCount.from_json(doc.get("attempt")) if doc else None
        bench_id, _, bench_version = str(doc.get("benchmark", "")).partition("@")
        manifest, issued = doc.get("cartridgeManifestDigest", ""), e.get("verdict", doc.get("verdict")) == "issued"
    subject = str(doc.get("credentialSubject", {}).get("id", "")) if level else ""
    return {
        "started_at": ts(row.time), "finished_at": ts(row.time),
        "cartridge_ref": f"{s.repository}@{s.subject}" if s is not None else "",
        "cartridge_manifest_digest": manifest or "",
        "rom_digest": e.get("romDigest") or level.get("acx:cartridgeRomDigest") or doc.get("romDigest", ""),
        "benchmark_id": bench_id, "benchmark_version": bench_version,
        "benchmark_digest": e.get("benchmarkDigest") or level.get("acx:benchmarkDigest") or
        doc.get("benchmarkDigest", ""),
        "issuer": e.get("issuer") or cred_mod.issuer_id(doc) or "",
        "solver": json.dumps({"name": level["acx:solver"]} if "acx:solver" in level else {}, sort_keys=True),
        "state": "issued" if issued else "not-issued", "starts_cooldown": 1,
        "reasons": json.dumps(sorted(e.get("reasons") or [])),
        "mu": e.get("mu", level.get("acx:ratingMu", doc.get("mu"))),
        "sigma": e.get("sigma", level.get("acx:ratingSigma", doc.get("sigma"))),
        "games": level.get("acx:gamesPlayed", doc.get("gamesPlayed")),
        "acx_level": e.get("level", level.get("acx:acxLevel", doc.get("acxLevel"))),
        "credential_id": doc.get("id") if level else None,
        "publication": "published" if s is not None else None,
        "cartridge_id": e.get("cartridgeId") or doc.get("cartridgeId") or _cartridge_id(subject),
        "capability_id": e.get("capability") or level.get("acx:capabilityId") or doc.get("capability"),
        "cooldown_scope": level.get("acx:cooldownScope"),
        "publisher_key": (count.publisher if count else None) or e.get("publisher"),  # the log's: records deleted
        "attempt_uid": count.attempt_id if count else None,
    }


def _cartridge_id(subject: str) -> str | None:
    """``urn:acx:cartridge:<id>@<version>`` -> ``<id>``."""
    prefix = "urn:acx:cartridge:"
    return subject[len(prefix):].rpartition("@")[0] or None if subject.startswith(prefix) else None


def _write(ledger: Ledger, scan: Scan, report: RebuildReport, allow_older: bool) -> None:
    """Fill the fresh ledger: attempts (oldest first), then credentials, lists, entries and revoked bits."""
    db = ledger.db
    db.execute("BEGIN IMMEDIATE")
    try:
        ids: dict[str, int] = {}
        for row in _rows(scan, report):
            cols = _fields(row)
            cur = db.execute(f"INSERT INTO attempts ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                             tuple(cols.values()))
            report.attempts += 1
            report.issued += cols["state"] == "issued"
            report.not_issued += cols["state"] == "not-issued"
            if row.signed is not None and row.signed.kind == "credential":
                ids[row.signed.digest] = int(cur.lastrowid or 0)
        _write_lists(ledger, scan, report, ids, allow_older)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _write_lists(ledger: Ledger, scan: Scan, report: RebuildReport, attempt_ids: dict[str, int],
                 allow_older: bool) -> None:
    """The status lists: one row per URL, each found credential's entry, the newest copy's revoked bits."""
    db = ledger.db
    newest: dict[str, ListCopy] = {}
    for copy in scan.lists:
        if copy.url not in newest or copy.sequence > newest[copy.url].sequence:
            newest[copy.url] = copy
    logged: dict[str, int] = {}
    for e in scan.log_entries:
        if e.get("kind") == "status-list" and isinstance(e.get("sequence"), int):
            logged[str(e.get("url"))] = max(logged.get(str(e.get("url")), 0), int(e["sequence"]))
    creds = [s for s in scan.signed.values() if s.kind == "credential"]
    urls: dict[str, tuple[str, datetime]] = {}  # url -> (issuer, first use)
    for s in creds:
        when = parse_datetime(s.doc.get("validFrom")) or datetime.now(UTC)
        for entry in cred_mod.status_entries(s.doc):
            url = str(entry.get("statusListCredential"))
            if url not in urls or when < urls[url][1]:
                urls[url] = (str(cred_mod.issuer_id(s.doc)), when)
    for url, copy in newest.items():
        urls.setdefault(url, (str(cred_mod.issuer_id(copy.doc)), parse_datetime(copy.doc.get("validFrom"))
                              or datetime.now(UTC)))
    for url, (issuer, first) in sorted(urls.items()):
        _write_list(db, url, issuer, first, newest.get(url), logged.get(url, 0), creds, attempt_ids, report,
                    allow_older)
    for copy in scan.lists:
        db.execute("INSERT OR REPLACE INTO publications (list_uuid, location, digest, published_at) VALUES "
                   "(?, ?, ?, ?)", (_uuid(copy.url), copy.location, copy.digest,
                                    ts(parse_datetime(copy.doc.get("validFrom")) or datetime.now(UTC))))


def _uuid(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1].lower()


def _write_list(db: Any, url: str, issuer: str, first: datetime, copy: ListCopy | None, logged_seq: int,
                creds: list[FoundSigned], attempt_ids: dict[str, int], report: RebuildReport,
                allow_older: bool) -> None:
    """One list's row, its found credentials' entries and the newest copy's revoked bits (a bit whose credential
    is gone gets a placeholder entry, so it stays set); refuses a copy older than the log's last signature."""
    list_uuid = _uuid(url)
    try:
        uuid.UUID(list_uuid)
    except ValueError:
        report.warnings.append(f"status list {url}: its last path segment is not a UUID; not restored")
        return
    bits = statuslist.list_bits(copy.doc) if copy is not None else b""
    size = len(bits) * 8 if bits else statuslist.MIN_ENTRIES
    sequence = max(logged_seq, copy.sequence if copy is not None else 0)
    if copy is None:  # its bits unknown: re-signed with none set (and newer), it would un-revoke every one
        gap = (f"status list {url}: no copy found in the repositories given, though a credential names it"
               + (f" and the log names sequence {logged_seq}" if logged_seq else "") + "; its revoked bits are "
               "unknown (the next signature would clear every one)")
        if not allow_older:
            raise UsageError(f"state rebuild: {gap}. Give every repository the list was published to "
                             "(--repository), or --allow-older-lists to rebuild anyway and revoke again")
        report.warnings.append(f"{gap}: revoke them again")
    elif logged_seq > copy.sequence:
        gap = (f"status list {url}: the log names sequence {logged_seq}, the newest copy found is {copy.sequence}; a "
               "revocation signed in between would be lost (and un-revoked by the next signature)")
        if not allow_older:
            raise UsageError(f"state rebuild: {gap}. Give every repository the list was published to "
                             "(--repository), or --allow-older-lists to rebuild anyway and revoke again")
        report.warnings.append(f"{gap}: revoke it again")
    db.execute("INSERT INTO status_lists (uuid, url, created_at, size, purpose, issuer, sequence) "
               "VALUES (?, ?, ?, ?, 'revocation', ?, ?)", (list_uuid, url, ts(first), size, issuer, sequence))
    revoked = set(statuslist.set_indices(bits)) if bits else set()
    revoked_at = ts(parse_datetime(copy.doc.get("validFrom")) or first) if copy is not None else None
    known: set[int] = set()
    for s in creds:
        for entry in cred_mod.status_entries(s.doc):
            if str(entry.get("statusListCredential")) != url:
                continue
            idx = statuslist.parse_index(entry.get("statusListIndex"))
            cid = str(s.doc.get("id"))
            hit = idx in revoked
            db.execute("INSERT OR IGNORE INTO status_entries (list_uuid, idx, credential_id, attempt_id, "
                       "allocated_at, revoked_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (list_uuid, idx, cid, attempt_ids.get(s.digest), ts(parse_datetime(s.doc.get("validFrom"))
                                                                         or first),
                        revoked_at if hit else None, rc.REVOKED if hit else None))
            db.execute("INSERT OR IGNORE INTO credentials (credential_id, credential_digest, attestation_digest, "
                       "attestation_ref, issued_at) VALUES (?, ?, ?, ?, ?)",
                       (cid, s.digest, s.referrer, f"{s.repository}@{s.referrer}",
                        ts(parse_datetime(s.doc.get("validFrom")) or first)))
            known.add(idx)
            report.credentials += 1
    for idx in sorted(revoked - known):  # a revoked credential no repository holds: its bit stays set
        db.execute("INSERT INTO status_entries (list_uuid, idx, credential_id, allocated_at, revoked_at, reason) "
                   "VALUES (?, ?, ?, ?, ?, ?)", (list_uuid, idx, f"urn:acx:rebuilt:{list_uuid}:{idx}", ts(first),
                                                 revoked_at, rc.REVOKED))
    report.lists.append({"url": url, "sequence": sequence, "size": size, "entries": len(known),
                         "revoked": len(revoked), "newestCopy": copy.location if copy is not None else None})
