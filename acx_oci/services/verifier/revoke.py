"""Revocation: set the credential's bit, re-sign the list, republish it everywhere.

The ledger knows every place the state's status list was published (the
cartridge repositories it attested in, and files); a revocation that reached
only some of them would leave resolvers disagreeing, so each place is updated
and any that failed is reported rather than silently skipped. With a log, every
re-signed list is appended as a ``status-list`` entry (URL, sequence, digest)
and the log published before the list goes anywhere: a list shown to one
consumer and not to another is then visible in the verifier's history.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acx_oci import reasons
from acx_oci.crypto import Identity, sha256_digest
from acx_oci.errors import AcxError, UsageError
from acx_oci.oci import StoreOptions, open_store, parse_reference
from acx_oci.services.artifacts import publish_status_list
from acx_oci.services.verifier.cosign_standing import refresh_projections, withdraw
from acx_oci.services.verifier.ledger import Ledger
from acx_oci.services.verifier.log import Logged, VerifierLog, refuse_same_repository
from acx_oci.services.verifier.publish import signed_status_list
from acx_oci.timeutil import parse_datetime


@dataclass
class RevokeOutcome:
    """What ``revoke`` did: the credential's list entry and where the re-signed list was or was not published."""
    credential_id: str
    list_url: str
    index: int
    published: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    logged: Logged | None = None

    def to_json(self) -> dict[str, object]:
        """The JSON form printed by ``acx revoke --json``."""
        return {"credentialId": self.credential_id, "statusList": self.list_url, "index": self.index,
                "published": self.published, "failed": self.failed, "revoked": True,
                **({"log": self.logged.to_json()} if self.logged else {})}


def _check_log(ledger: Ledger, vlog: VerifierLog | None) -> None:
    """The log may not share a repository with any status list (those are the publishers' repositories)."""
    if vlog is None:
        return
    for list_uuid in ledger.status_list_uuids():
        for pub in ledger.publications(list_uuid):
            location = str(pub["location"])
            if not location.startswith("file://"):
                refuse_same_repository(vlog.options, parse_reference(location))


def revoke(state_dir: Path, name: str, verifier: Identity, now: datetime, reason: str = reasons.REVOKED,
           store_options: StoreOptions | None = None, vlog: VerifierLog | None = None) -> RevokeOutcome:
    """Revoke the credential named by id, credential digest or attestation digest (logged when ``vlog``)."""
    with Ledger(state_dir) as ledger:
        _check_log(ledger, vlog)
        cred_id = ledger.find_credential(name)
        if cred_id is None:
            raise UsageError(f"revoke: no credential, credential digest or attestation {name} was issued from "
                             f"the state in {state_dir}")
        entry_list = ledger.list_of_credential(cred_id)
        issuer = ledger.list_issuer(entry_list) if entry_list else None
        if issuer is not None and issuer != verifier.did:
            raise UsageError(f"credential {cred_id} was issued by {issuer}; --key/--issuer speak for {verifier.did}")
        list_uuid, index = ledger.revoke(cred_id, now, reason)
        sl = ledger.status_list_by_uuid(list_uuid)
        outcome = RevokeOutcome(cred_id, sl.url, index)
        outcome.published, outcome.failed, outcome.logged = republish(ledger, list_uuid, verifier, now,
                                                                      store_options, vlog)
        outcome.failed += withdraw(ledger, cred_id, now, store_options)  # cosign reads no list: take it down
        return outcome


@dataclass
class RefreshResult:
    """One re-signed list and where it was (or could not be) republished; ``skipped`` says why it was not."""
    list_url: str
    published: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: str | None = None  # why this list was not re-signed (another issuer's)
    logged: Logged | None = None


def refresh(state_dir: Path, verifier: Identity, now: datetime,
            store_options: StoreOptions | None = None, vlog: VerifierLog | None = None) -> list[RefreshResult]:
    """Re-sign every list of the state with ``validFrom = now``, log them (one checkpoint), republish everywhere.

    Run it more often than the consumers' ``status.maxAge``: a fresh list is
    what stops a repository owner from rolling back to an older, unrevoked
    copy of the list (it is signed by the verifier, so it would still verify).
    """
    out: list[RefreshResult] = []
    todo: list[tuple[RefreshResult, str, dict[str, Any]]] = []
    with Ledger(state_dir) as ledger:
        _check_log(ledger, vlog)
        for list_uuid in ledger.status_list_uuids():
            result = RefreshResult(ledger.status_list_by_uuid(list_uuid).url)
            issuer = ledger.list_issuer(list_uuid)
            if issuer is not None and issuer != verifier.did:
                result.skipped = f"signed by {issuer}, not {verifier.did} (refresh it with that identity)"
            else:
                todo.append((result, list_uuid, _sign(ledger, list_uuid, verifier, now)))
            out.append(result)
        logged = vlog.log_lists([s for _, _, s in todo], now, verifier.did) if vlog is not None and todo else None
        for result, list_uuid, signed in todo:
            result.published, result.failed = _push(ledger, list_uuid, signed, now, store_options)
            until = parse_datetime(signed.get("validUntil")) or now
            result.failed += refresh_projections(ledger, list_uuid, verifier, now, until, store_options)
            result.logged = logged
            if logged is not None and logged.error:
                result.failed.insert(0, logged.error)
    return out


def _sign(ledger: Ledger, list_uuid: str, verifier: Identity, now: datetime) -> dict[str, Any]:
    """The list as the ledger has it now, signed with the next sequence (only by the identity that issued it)."""
    sl = ledger.status_list_by_uuid(list_uuid)
    issuer = ledger.list_issuer(list_uuid)
    if issuer is not None and issuer != verifier.did:
        raise UsageError(f"status list {sl.url} was issued by {issuer}; refusing to re-sign it as {verifier.did}")
    return signed_status_list(ledger, sl, verifier, now)


def republish(ledger: Ledger, list_uuid: str, verifier: Identity, now: datetime,
              store_options: StoreOptions | None = None, vlog: VerifierLog | None = None
              ) -> tuple[list[str], list[str], Logged | None]:
    """Sign the list as the ledger has it now, log it (``vlog``), write it to every recorded place: (done, failed,
    logged); a log that could not be published is one of the failed places."""
    signed = _sign(ledger, list_uuid, verifier, now)
    logged = vlog.log_lists([signed], now, verifier.did) if vlog is not None else None
    done, failed = _push(ledger, list_uuid, signed, now, store_options)
    if logged is not None and logged.error:
        failed.insert(0, logged.error)
    return done, failed, logged


def _push(ledger: Ledger, list_uuid: str, signed: dict[str, Any], now: datetime,
          store_options: StoreOptions | None) -> tuple[list[str], list[str]]:
    """Write the signed list to every place the ledger recorded it: (done, failed)."""
    data = json.dumps(signed, indent=2).encode() + b"\n"
    done: list[str] = []
    failed: list[str] = []
    for pub in ledger.publications(list_uuid):
        location = str(pub["location"])
        try:
            if location.startswith("file://"):
                path = Path(unquote(urlparse(location).path))
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                digest = sha256_digest(data)
            else:
                with open_store(parse_reference(location), store_options) as store:
                    digest = publish_status_list(store, signed).digest
            ledger.record_publication(list_uuid, location, digest, now)
            done.append(location)
        except (AcxError, OSError) as exc:
            failed.append(f"{location}: {exc}")
    return done, failed
