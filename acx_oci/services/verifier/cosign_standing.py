"""Which cosign projections stand, and putting the registry in line with that: ``attest`` publishes one,
``revoke``, a superseding ``attest`` and ``status-refresh`` take down or replace what no longer stands.

Why a record of its own: cosign reads no status list, so the only way a revocation reaches
``cosign verify-attestation`` is that the projection is gone from the registry. The state keeps, per
credential, where its projection went and the bytes to rebuild it (one table beside the ledger's, in the
same database). A level stands while it is not revoked, not superseded (a later level of the same issuer,
ROM, benchmark and capability in the same place) and not past its credential's ``validUntil``; what stands
is re-signed by ``status-refresh`` with a new ``validUntil`` (the fresh list's), so a projection whose
removal failed still expires within a list's lifetime for any policy that checks ``validUntil``.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from acx_oci.crypto import Identity, sha256_digest
from acx_oci.errors import AcxError
from acx_oci.jsonio import parse_json
from acx_oci.model import LevelCredential, rfc3339
from acx_oci.oci import Descriptor, Store, StoreOptions, open_store, parse_reference
from acx_oci.services.artifacts import (
    PREDICATE_LEVEL,
    attestation_envelope,
    bundle_bytes,
    push_attestation_envelopes,
    push_bundle,
    remove_bundle,
)
from acx_oci.services.verifier.ledger import Ledger
from acx_oci.timeutil import parse_datetime

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cosign_projections (
    credential_id TEXT NOT NULL,
    location TEXT NOT NULL,
    subject_media_type TEXT NOT NULL,
    subject_size INTEGER NOT NULL,
    supersede_key TEXT NOT NULL,
    issued_at TEXT NOT NULL,
    credential BLOB NOT NULL,
    envelope BLOB NOT NULL,
    bundle_digest TEXT,
    published_at TEXT NOT NULL,
    PRIMARY KEY (credential_id, location)
);
"""


@dataclass(frozen=True)
class _Row:
    credential_id: str
    location: str
    subject_media_type: str
    subject_size: int
    supersede_key: str
    issued_at: str
    credential: bytes
    envelope: bytes
    bundle_digest: str | None
    seq: int = 0  # the row's insertion order: between two levels issued in the same second, the later one wins


def _rows(db: sqlite3.Connection, where: str, args: tuple[Any, ...]) -> list[_Row]:
    db.executescript(_SCHEMA)
    cur = db.execute(
        "SELECT credential_id, location, subject_media_type, subject_size, supersede_key, issued_at, credential, "
        f"envelope, bundle_digest, rowid FROM cosign_projections WHERE {where} ORDER BY issued_at, rowid", args)
    return [_Row(r[0], r[1], r[2], int(r[3]), r[4], r[5], bytes(r[6]), bytes(r[7]), r[8], int(r[9])) for r in cur]


def _key(credential: LevelCredential) -> str:
    """The superseding key (issuer, ROM, benchmark digest, capability), as the judge draws it."""
    result = credential.result
    return json.dumps([credential.issuer, result.get("acx:cartridgeRomDigest"),
                       result.get("acx:benchmarkDigest"), result.get("acx:capabilityId")])


def _stands(db: sqlite3.Connection, row: _Row, rows: list[_Row], now: datetime) -> bool:
    """Not revoked, not superseded by a later level of the same key in the same place, not expired."""
    revoked = db.execute("SELECT 1 FROM status_entries WHERE credential_id = ? AND revoked_at IS NOT NULL",
                         (row.credential_id,)).fetchone()
    if revoked is not None:
        return False
    if any(o.supersede_key == row.supersede_key and (o.issued_at, o.seq) > (row.issued_at, row.seq) for o in rows):
        return False
    credential = parse_json(row.credential, "credential")
    end = parse_datetime(credential.get("validUntil")) if isinstance(credential, dict) else None
    return end is None or end > now


def _sign(store: Store, row: _Row, verifier: Identity, now: datetime, list_valid_until: datetime) -> _Row:
    """A fresh envelope and bundle for ``row`` (``validUntil`` = the new list's), pushed; the old bundle stays."""
    subject = row.location.rsplit("@", 1)[1]
    envelope = attestation_envelope(subject, store.reference.repository, row.credential, verifier, list_valid_until)
    digest = push_bundle(store, subject, row.subject_size, row.subject_media_type, bundle_bytes(envelope, verifier),
                         PREDICATE_LEVEL, now)
    return replace(row, envelope=envelope, bundle_digest=digest)


def _save(db: sqlite3.Connection, row: _Row, now: datetime) -> None:
    db.execute("INSERT INTO cosign_projections VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
               "ON CONFLICT (credential_id, location) DO UPDATE SET envelope = excluded.envelope, "
               "bundle_digest = excluded.bundle_digest, published_at = excluded.published_at",
               (row.credential_id, row.location, row.subject_media_type, row.subject_size, row.supersede_key,
                row.issued_at, row.credential, row.envelope, row.bundle_digest, rfc3339(now)))


def _sync(db: sqlite3.Connection, store: Store, location: str, now: datetime, renew: tuple[Identity, datetime] | None
          ) -> list[str]:
    """Bring one cartridge's projections in line: re-sign what stands (``renew``), take down the rest, rewrite
    the ``.att`` tag with what stands. Returns what failed (one line each)."""
    rows = _rows(db, "location = ?", (location,))
    subject = location.rsplit("@", 1)[1]
    failed: list[str] = []
    standing: list[bytes] = []
    for row in rows:
        if _stands(db, row, rows, now):
            if renew is not None:
                old, row = row.bundle_digest, _sign(store, row, renew[0], now, renew[1])
                _save(db, row, now)
                if old is not None and old != row.bundle_digest and (err := remove_bundle(store, subject, old)):
                    failed.append(err)
            standing.append(row.envelope)
        elif row.bundle_digest is not None:
            err = remove_bundle(store, subject, row.bundle_digest)
            if err:
                failed.append(err)
            else:
                db.execute("UPDATE cosign_projections SET bundle_digest = NULL WHERE credential_id = ? AND "
                           "location = ?", (row.credential_id, location))
    push_attestation_envelopes(store, subject, standing)
    return failed


def publish_projection(store: Store, subject: Descriptor, credential_bytes: bytes, verifier: Identity,
                       ledger: Ledger, now: datetime, list_valid_until: datetime) -> list[str]:
    """Publish the level in both layouts and take down what it supersedes; (failed removals). A failed push
    raises (the publication fails like any other push)."""
    doc = parse_json(credential_bytes, "credential")
    credential = LevelCredential.document(doc) if isinstance(doc, dict) else LevelCredential.empty()
    location = str(store.reference.with_digest(subject.digest))
    issued = str(credential.get("validFrom") or rfc3339(now))
    envelope = attestation_envelope(subject.digest, store.reference.repository, credential_bytes, verifier,
                                    list_valid_until)
    cred_id = str(credential.get("id") or sha256_digest(credential_bytes))
    old = _rows(ledger.db, "credential_id = ? AND location = ?", (cred_id, location))
    row = _Row(cred_id, location, subject.media_type,
               subject.size, _key(credential), issued, credential_bytes, envelope, None)
    digest = push_bundle(store, subject.digest, subject.size, subject.media_type, bundle_bytes(envelope, verifier),
                         PREDICATE_LEVEL, now)
    _save(ledger.db, replace(row, bundle_digest=digest), now)
    failed = _sync(ledger.db, store, location, now, None)
    for prev in old:  # the same credential published here before: its earlier bundle goes
        if prev.bundle_digest not in (None, digest):
            err = remove_bundle(store, subject.digest, str(prev.bundle_digest))
            failed += [err] if err else []
    return failed


def withdraw(ledger: Ledger, credential_id: str, now: datetime, options: StoreOptions | None = None) -> list[str]:
    """After ``revoke``: take the credential's projection down wherever it went; (what failed)."""
    failed: list[str] = []
    for location in {r.location for r in _rows(ledger.db, "credential_id = ?", (credential_id,))}:
        try:
            with open_store(parse_reference(location), options) as store:
                failed += _sync(ledger.db, store, location, now, None)
        except AcxError as exc:
            failed.append(f"{location}: cosign projection not taken down ({exc})")
    return failed


def refresh_projections(ledger: Ledger, list_uuid: str, verifier: Identity, now: datetime,
                        list_valid_until: datetime, options: StoreOptions | None = None) -> list[str]:
    """After ``status-refresh`` re-signed a list: re-sign the standing projections of its credentials with the
    new ``validUntil``, take down the rest; (what failed)."""
    rows = _rows(ledger.db, "credential_id IN (SELECT credential_id FROM status_entries WHERE list_uuid = ?)",
                 (list_uuid,))
    failed: list[str] = []
    for location in sorted({r.location for r in rows}):
        try:
            with open_store(parse_reference(location), options) as store:
                failed += _sync(ledger.db, store, location, now, (verifier, list_valid_until))
        except AcxError as exc:
            failed.append(f"{location}: cosign projection not refreshed ({exc})")
    return failed
