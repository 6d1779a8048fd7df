"""Publishing a signed ``attest`` result: the status list, then the attestation, next to the cartridge.

Publication is separate from the run on purpose. The attempt counts when its
verdict exists: the ledger holds it (and its cooldown) before any byte goes to
the publisher's registry, so a registry that vetoes a low result (fails the
push) gains nothing - the attempt stays ``pending`` with its signed result in
the output folder, and ``acx-oci attest --publish OUT_DIR [--to REPO]`` pushes
exactly that result later, to the same or another registry, any number of
times. Pushing is idempotent: the same credential bytes and game records (or
the same attempt record) make the same referrer digest; only the status list
is re-signed (a fresh ``validFrom``, the next sequence), so a late publication
never puts up an expired list. Before pushing, the folder is re-verified
against the cartridge in the registry and the verifier's key.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from acx_oci.crypto import Identity, sha256_digest
from acx_oci.errors import PublicationFailed, RegistryError
from acx_oci.jsonio import parse_json
from acx_oci.model import statuslist
from acx_oci.oci import Descriptor, Store
from acx_oci.services.artifacts import publish_status_list, push_attestation, status_tag
from acx_oci.services.artifacts import push_attempt_record as push_attempt_record_referrer
from acx_oci.services.verifier.cosign_standing import publish_projection
from acx_oci.services.verifier.ledger import Ledger, StatusList
from acx_oci.timeutil import parse_datetime
from acx_oci.urls import without_fragment

# A signed list expires: an old copy put back by a repository owner stops verifying after this,
# which is all a first-time consumer (no remembered sequence) has against a rollback. One day, like
# TUF's timestamp role: a revocation reaches every consumer within a day, and a verifier that runs
# `acx-oci status-refresh` hourly (docs/operations.md: systemd timer / cron) survives a day of outages.
STATUS_LIST_VALIDITY = timedelta(days=1)
PENDING, PUBLISHED = "pending", "published"
Progress = Callable[[int, int, str], None]  # (done, total, text)


@dataclass(frozen=True)
class Published:
    """What went up: an issued run's credential (with its list), or a NOT ISSUED run's attempt record."""

    cartridge_ref: str
    credential_id: str  # the credential's (or attempt record's) id
    credential_digest: str  # the credential's (or attempt record's) sha256
    attestation_digest: str  # the referrer manifest's digest
    status_list_ref: str | None  # None: an attempt record (no status list)
    kind: str = "credential"  # or "attempt-record"

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document."""
        return {"published": True, "kind": self.kind, "cartridge": self.cartridge_ref,
                "credentialId": self.credential_id, "credentialDigest": self.credential_digest,
                "attestationDigest": self.attestation_digest, "statusListRef": self.status_list_ref}


def status_base_url(issuer: str) -> str:
    """Where the issuer's status lists live by default: its did:web host, else acx.dev."""
    if issuer.startswith("did:web:"):
        host_path = without_fragment(issuer[len("did:web:"):]).split(":")
        return "https://" + "/".join(p.replace("%3A", ":") for p in host_path) + "/acx/status"
    return "https://acx.dev/status"


def signed_status_list(ledger: Ledger, sl: StatusList, verifier: Identity, now: datetime) -> dict[str, Any]:
    """The state's list as of ``now``: every revoked index set, the next sequence, signed by the verifier."""
    bits = bytearray(statuslist.empty_bits(sl.size))
    for i in ledger.revoked_indices(sl.uuid):
        statuslist.set_bit(bits, i)
    return statuslist.sign_status_list(
        statuslist.new_status_list(list_url=sl.url, issuer=verifier.did, valid_from=now, size=sl.size,
                                   purpose=sl.purpose, bits=bytes(bits), valid_until=now + STATUS_LIST_VALIDITY,
                                   sequence=ledger.next_sequence(sl.uuid)),
        verifier, verifier.verification_method, now)


def push_result(store: Store, subject: Descriptor, ledger: Ledger, sl: StatusList, signed_list: dict[str, Any],
                credential_bytes: bytes, records: list[bytes], credential_id: str, now: datetime,
                progress: Progress | None = None, verifier: Identity | None = None,
                proof: bytes | None = None) -> Published:
    """The list goes up first, so no resolver ever sees the credential without its status.

    With ``verifier``, the level also goes up as a cosign attestation (services.verifier.cosign_standing), taking down
    the projection of a level it supersedes; a failed push of it fails the publication like any other push.
    """
    list_desc = publish_status_list(store, signed_list)
    location = str(store.reference.with_tag(status_tag(sl.url)))
    ledger.record_publication(sl.uuid, location, list_desc.digest, now)
    total = 2 if records else 1  # the credential and the one game-records layer

    def on_blob(done: int, title: str) -> None:
        if progress is not None:
            progress(done, total, f"uploaded {title}")

    att = push_attestation(store, subject, credential_bytes, records, on_blob=on_blob, proof=proof)
    if verifier is not None:
        list_until = parse_datetime(signed_list.get("validUntil")) or now + STATUS_LIST_VALIDITY
        publish_projection(store, subject, credential_bytes, verifier, ledger, now, list_until)
    cred_digest = sha256_digest(credential_bytes)
    ledger.record_credential(credential_id, cred_digest, now, att.digest, str(store.reference.with_digest(att.digest)))
    return Published(str(store.reference.with_digest(subject.digest)), credential_id, cred_digest, att.digest,
                     location)


def publish_attempt(ledger: Ledger, attempt_id: int, out_dir: Path, push: Callable[[], Published],
                    key_hint: str = "--key KEY") -> Published:
    """Run ``push`` for an attempt the ledger already counts: ``pending`` until the registry took everything.

    A failed push changes nothing the ledger knows (the cooldown runs, the attempt is in the history): it
    only leaves the signed result in ``out_dir`` for ``attest --publish``.
    """
    ledger.set_publication(attempt_id, PENDING)
    try:
        published = push()
    except RegistryError as exc:
        raise PublicationFailed(
            f"{exc}; the attempt counts all the same (its cooldown runs): the signed result is kept in {out_dir}, "
            f"publish it with `acx-oci attest --publish {out_dir} {key_hint}` (--to REPO for another registry)"
        ) from None
    ledger.set_publication(attempt_id, PUBLISHED)
    note_in_result(out_dir, published)
    return published


def push_attempt_record(store: Store, subject: Descriptor, record: bytes, cartridge_ref: str,
                        proof: bytes | None = None) -> Published:
    """Push a NOT ISSUED run's signed attempt record (and its log proof) next to the cartridge."""
    doc = parse_json(record, "attempt record")
    desc = push_attempt_record_referrer(store, subject, record, proof)
    return Published(cartridge_ref, str(doc.get("id", "")) if isinstance(doc, dict) else "", sha256_digest(record),
                     desc.digest, None, "attempt-record")


def note_in_result(out_dir: Path, published: Published) -> None:
    """result.json says where the credential went (it was written before the push)."""
    path = out_dir / "result.json"
    if not path.is_file():
        return
    doc = parse_json(path.read_bytes(), f"run result ({path})")
    doc.update(attestationDigest=published.attestation_digest, statusListRef=published.status_list_ref)
    path.write_text(json.dumps(doc, indent=2) + "\n")
