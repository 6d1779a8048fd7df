"""Publishing a signed ``attest`` result: the status list, then the attestation, next to the cartridge.

Publication is separate from the run on purpose. A registry that fails after
the games were played is a lane error, not an attempt: the run's attempt stays
``pending`` (no cooldown) with its signed credential in the output folder, and
``acx-oci attest --publish OUT_DIR`` pushes it later. Pushing is idempotent:
the same credential bytes and game records make the same attestation digest;
only the status list is re-signed (a fresh ``validFrom``, the next sequence),
so a late publication never puts up an expired list. Before pushing, the folder
is re-verified against the cartridge in the registry and the verifier's key.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from acx_oci.crypto.digest import sha256_digest
from acx_oci.crypto.keys import Identity
from acx_oci.errors import PublicationFailed, RegistryError, UsageError, VerificationError
from acx_oci.evaluation.checks import VerifyContext
from acx_oci.evaluation.verify import verify_proof_only
from acx_oci.jsonio import parse_json
from acx_oci.model import gamerecords, statuslist
from acx_oci.model.credential import evidence_digest, issuer_id, level_result
from acx_oci.oci.model import Descriptor
from acx_oci.oci.open import open_store
from acx_oci.oci.ref import parse_reference
from acx_oci.oci.store import Store, StoreOptions
from acx_oci.services.attestation import publish_status_list, push_attestation, status_tag
from acx_oci.services.cartridge import load_cartridge
from acx_oci.services.ledger import Ledger, StatusList

# A signed list expires: an old copy put back by a repository owner stops verifying after this,
# which is all a first-time consumer (no remembered sequence) has against a rollback. One day, like
# TUF's timestamp role: a revocation reaches every consumer within a day, and a verifier that runs
# `acx-oci status-refresh` hourly (docs/operations.md: systemd timer / cron) survives a day of outages.
STATUS_LIST_VALIDITY = timedelta(days=1)
PENDING, PUBLISHED = "pending", "published"
Progress = Callable[[int, int, str], None]  # (done, total, text)


@dataclass(frozen=True)
class Published:
    cartridge_ref: str
    credential_id: str
    credential_digest: str
    attestation_digest: str
    status_list_ref: str

    def to_json(self) -> dict[str, Any]:
        return {"published": True, "cartridge": self.cartridge_ref, "credentialId": self.credential_id,
                "credentialDigest": self.credential_digest, "attestationDigest": self.attestation_digest,
                "statusListRef": self.status_list_ref}


def status_base_url(issuer: str) -> str:
    """Where the issuer's status lists live by default: its did:web host, else acx.dev."""
    if issuer.startswith("did:web:"):
        host_path = issuer[len("did:web:"):].split("#", 1)[0].split(":")
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
                progress: Progress | None = None) -> Published:
    """The list goes up first, so no resolver ever sees the credential without its status."""
    list_desc = publish_status_list(store, signed_list)
    location = str(store.reference.with_tag(status_tag(sl.url)))
    ledger.record_publication(sl.uuid, location, list_desc.digest, now)
    total = len(records) + 1

    def on_blob(done: int, title: str) -> None:
        if progress is not None:
            progress(done, total, f"uploaded {title}")

    att = push_attestation(store, subject, credential_bytes, records, on_blob=on_blob)
    cred_digest = sha256_digest(credential_bytes)
    ledger.record_credential(credential_id, cred_digest, now, att.digest, str(store.reference.with_digest(att.digest)))
    return Published(str(store.reference.with_digest(subject.digest)), credential_id, cred_digest, att.digest,
                     location)


def publish_attempt(ledger: Ledger, attempt_id: int, out_dir: Path, push: Callable[[], Published],
                    key_hint: str = "--key KEY", counted: bool = False) -> Published:
    """Run ``push`` for an issued attempt: ``pending`` (no cooldown) until the registry took everything.

    ``counted``: the attempt already started its cooldown (a ``--no-push`` run): a failed push keeps it.
    """
    ledger.set_publication(attempt_id, PENDING, starts_cooldown=counted)
    try:
        published = push()
    except RegistryError as exc:
        raise PublicationFailed(
            f"{exc}; nothing counted as an attempt (no cooldown): the signed result is kept in {out_dir}, "
            f"publish it with `acx-oci attest --publish {out_dir} {key_hint}`") from None
    ledger.set_publication(attempt_id, PUBLISHED, starts_cooldown=True)
    note_in_result(out_dir, published)
    return published


def note_in_result(out_dir: Path, published: Published) -> None:
    """result.json says where the credential went (it was written before the push)."""
    path = out_dir / "result.json"
    if not path.is_file():
        return
    doc = parse_json(path.read_bytes(), f"run result ({path})")
    doc.update(attestationDigest=published.attestation_digest, statusListRef=published.status_list_ref)
    path.write_text(json.dumps(doc, indent=2) + "\n")


# ------------------------------------------------------------------ attest --publish OUT_DIR


def _read_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise UsageError(f"attest --publish: expected {what} at {path}, found nothing (is it an attest -o folder?)")
    return parse_json(path.read_bytes(), str(path))


def _records(out_dir: Path, result: dict[str, Any]) -> list[bytes]:
    games = result.get("gameRecords")
    if not isinstance(games, list) or not games:
        raise UsageError(f"attest --publish: {out_dir}/result.json lists no game records")
    out: list[bytes] = []
    for g in games:
        rel = g.get("path") if isinstance(g, dict) else None
        if not isinstance(rel, str) or rel.startswith("/") or ".." in Path(rel).parts:
            raise UsageError(f"attest --publish: result.json names a game record outside {out_dir}: {rel!r}")
        out.append((out_dir / rel).read_bytes())
    return out


def verify_folder(out_dir: Path, verifier: Identity, store: Store, cart_digest: str, now: datetime
                  ) -> tuple[bytes, dict[str, Any], list[bytes], Descriptor]:
    """Everything in OUT_DIR holds against the cartridge and the verifier's key, or VerificationError."""
    credential_bytes = (out_dir / "credential.json").read_bytes() if (out_dir / "credential.json").is_file() else b""
    if not credential_bytes:
        raise UsageError(f"attest --publish: {out_dir} has no credential.json (only an issued run is published)")
    credential = parse_json(credential_bytes, f"{out_dir}/credential.json")
    if not isinstance(credential, dict):
        raise UsageError(f"{out_dir}/credential.json: expected a JSON object")
    problems: list[str] = []
    if issuer_id(credential) != verifier.did:
        problems.append(f"issuer is {issuer_id(credential)}, expected {verifier.did} (the --key/--issuer given)")
    method = verifier.verification_method
    proof = verify_proof_only(credential, VerifyContext(
        trust=None, now=now, resolve_keys=lambda _did: [(method, verifier.public_bytes)]))
    problems += [f"proof: {c.message}" for c in proof.checks if not c.ok]
    cart = load_cartridge(store, cart_digest, None)
    res = level_result(credential) or {}
    for key, expected in (("acx:cartridgeManifestDigest", cart.manifest.digest),
                          ("acx:cartridgeRomDigest", cart.rom_digest)):
        if res.get(key) != expected:
            problems.append(f"{key} is {res.get(key)}, the cartridge's is {expected}")
    result = _read_json(out_dir / "result.json", "result.json")
    records = _records(out_dir, result if isinstance(result, dict) else {})
    named = [evidence_digest(e) for e in credential.get("evidence") or []]
    if named != [sha256_digest(r) for r in records]:
        problems.append("evidence: the game records in the folder are not the ones the credential names")
    for i, raw in enumerate(records, 1):
        try:
            gamerecords.verify_game(raw, [verifier.public_bytes])
        except (UsageError, VerificationError) as exc:
            problems.append(f"game record {i}: {exc}")
            break
    if problems:
        raise VerificationError(f"attest --publish {out_dir}: " + "; ".join(problems[:4]))
    return credential_bytes, credential, records, cart.manifest.descriptor


def publish_folder(out_dir: Path, verifier: Identity, state_dir: Path, now: datetime,
                   options: StoreOptions | None = None, progress: Progress | None = None) -> Published:
    """``attest --publish``: re-verify OUT_DIR, re-sign the state's list, push both; the attempt then counts."""
    result = _read_json(out_dir / "result.json", "result.json")
    cart_ref = str((result.get("cartridge") or {}).get("reference") or "") if isinstance(result, dict) else ""
    ref = parse_reference(cart_ref)
    if not ref.digest:
        raise UsageError(f"attest --publish: result.json's cartridge reference {cart_ref!r} is not pinned by digest")
    store = open_store(ref, options or StoreOptions())
    credential_bytes, credential, records, subject = verify_folder(out_dir, verifier, store, ref.digest, now)
    cred_id = str(credential.get("id"))
    with Ledger(state_dir) as ledger:
        attempt = ledger.attempt_of_credential(cred_id)
        list_uuid = ledger.list_of_credential(cred_id)
        if attempt is None or list_uuid is None:
            raise UsageError(f"attest --publish: credential {cred_id} was not issued from the state {state_dir} "
                             "(give the --state the run used)")
        later = ledger.later_runs(attempt)
        if later:
            raise UsageError(f"attest --publish: attempt {attempt.id} was superseded by attempt {later[-1].id} on "
                             "the same ROM and benchmark; only the latest run may be published")
        sl = ledger.status_list_by_uuid(list_uuid)
        signed = signed_status_list(ledger, sl, verifier, now)
        list_file = out_dir / "status-list.json"
        list_bytes = json.dumps(signed, indent=2).encode() + b"\n"
        list_file.write_bytes(list_bytes)
        ledger.record_publication(sl.uuid, list_file.resolve().as_uri(), sha256_digest(list_bytes), now)
        return publish_attempt(ledger, attempt.id, out_dir, lambda: push_result(
            store, subject, ledger, sl, signed, credential_bytes, records, cred_id, now, progress),
            counted=attempt.starts_cooldown)


def new_run_dir(state_dir: Path, now: datetime | None = None) -> Path:
    """``attest`` without ``-o``: a fresh folder under ``STATE/runs/`` (UTC time plus a random suffix)."""
    import secrets
    from datetime import UTC

    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return state_dir / "runs" / f"{stamp}-{secrets.token_hex(3)}"


def run_issuer(out_dir: Path) -> str:
    """The DID an earlier run signed as (result.json's ``issuer``)."""
    result = _read_json(out_dir / "result.json", "result.json")
    issuer = result.get("issuer") if isinstance(result, dict) else None
    if not isinstance(issuer, str):
        raise UsageError(f"attest --publish: {out_dir}/result.json names no issuer; give --issuer DID")
    return issuer
