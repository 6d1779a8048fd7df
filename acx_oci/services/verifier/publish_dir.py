"""``attest --publish OUT_DIR [--to REPO]``: push exactly the result an earlier run signed, again if need be.

The run's folder (its ``-o``, or ``STATE/runs/RUN``) holds the signed result: an issued run's credential and
game records, or a NOT ISSUED run's attempt record. Publishing re-verifies it against the cartridge (pinned
by digest: ``--to`` must hold the same manifest) and the verifier's key, then pushes it; the same folder makes
the same referrer every time, so any number of republications, to any number of registries, are one result.
A newer run does not strand an older result: the newer credential already revoked it (``superseded``), so
publishing it late shows what happened rather than hiding it. A logged run's folder holds its ``log-proof.json``:
the same bytes go up again as the proof layer (so the same referrer digest), after the log itself is published
again when a log is configured (the first publication may be what failed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from acx_oci.crypto import Identity, sha256_digest
from acx_oci.errors import UsageError, VerificationError
from acx_oci.evaluation import proof_only
from acx_oci.jsonio import parse_json
from acx_oci.model import LevelCredential, evidence_digest, gamerecords
from acx_oci.model import attempt as am
from acx_oci.oci import Descriptor, Reference, Store, StoreOptions, open_store, parse_reference
from acx_oci.services.artifacts import LoadedCartridge, load_cartridge
from acx_oci.services.verifier.ledger import Ledger
from acx_oci.services.verifier.log import LogOptions, VerifierLog, read_proof, refuse_same_repository, status_entry
from acx_oci.services.verifier.publish import (
    Progress,
    Published,
    publish_attempt,
    push_attempt_record,
    push_result,
    signed_status_list,
)

ATTEMPT_RECORD_FILE = "attempt-record.json"


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


def _binding_problems(doc: Mapping[str, Any], issuer: str | None, digests: dict[str, str | None],
                      verifier: Identity, cart: LoadedCartridge, now: datetime) -> list[str]:
    """Issuer, proof, and the cartridge digests the document names."""
    problems: list[str] = []
    if issuer != verifier.did:
        problems.append(f"issuer is {issuer}, expected {verifier.did} (the --key/--issuer given)")
    method = verifier.verification_method
    proof = proof_only(doc, now, lambda _did: [(method, verifier.public_bytes)])
    problems += [f"proof: {c.message}" for c in proof.checks if not c.ok]
    for (key, found), expected in zip(digests.items(), (cart.manifest.digest, cart.rom_digest), strict=True):
        if found != expected:
            problems.append(f"{key} is {found}, the cartridge's is {expected}")
    return problems


def verify_folder(out_dir: Path, verifier: Identity, store: Store, cart_digest: str, now: datetime
                  ) -> tuple[bytes, LevelCredential, list[bytes], Descriptor]:
    """Everything in OUT_DIR holds against the cartridge and the verifier's key, or VerificationError."""
    credential_bytes = (out_dir / "credential.json").read_bytes() if (out_dir / "credential.json").is_file() else b""
    if not credential_bytes:
        raise UsageError(f"attest --publish: {out_dir} has neither credential.json nor {ATTEMPT_RECORD_FILE} "
                         "(a run refused before its first game, or a look below the gate's floor, has nothing to "
                         "publish)")
    credential = LevelCredential.read(credential_bytes, f"{out_dir}/credential.json")  # the door: the folder
    cart = load_cartridge(store, cart_digest, None)
    res = credential.result
    problems = _binding_problems(credential, credential.issuer, {
        "acx:cartridgeManifestDigest": res.get("acx:cartridgeManifestDigest"),
        "acx:cartridgeRomDigest": res.get("acx:cartridgeRomDigest")}, verifier, cart, now)
    result = _read_json(out_dir / "result.json", "result.json")
    records = _records(out_dir, result if isinstance(result, dict) else {})
    named = [evidence_digest(e) for e in credential.evidence]
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


def verify_attempt_folder(out_dir: Path, verifier: Identity, store: Store, cart_digest: str, now: datetime
                          ) -> tuple[bytes, Descriptor]:
    """A NOT ISSUED run's attempt record holds against the cartridge and the verifier's key."""
    raw = (out_dir / ATTEMPT_RECORD_FILE).read_bytes()
    doc = parse_json(raw, f"{out_dir}/{ATTEMPT_RECORD_FILE}")
    record = am.parse_attempt_record(doc)
    cart = load_cartridge(store, cart_digest, None)
    problems = _binding_problems(doc, record.issuer, {"cartridgeManifestDigest": record.cartridge_manifest_digest,
                                                      "romDigest": record.rom_digest}, verifier, cart, now)
    if raw != am.record_bytes(doc):
        problems.append("the record is not in its canonical (RFC 8785) form")
    if problems:
        raise VerificationError(f"attest --publish {out_dir}: " + "; ".join(problems[:4]))
    return raw, cart.manifest.descriptor


def _target(result: Any, to: str | None) -> Reference:
    """The cartridge by digest: where result.json says, or the same digest in ``--to``'s repository."""
    cart_ref = str((result.get("cartridge") or {}).get("reference") or "") if isinstance(result, dict) else ""
    ref = parse_reference(cart_ref)
    if not ref.digest:
        raise UsageError(f"attest --publish: result.json's cartridge reference {cart_ref!r} is not pinned by digest")
    return parse_reference(to).with_digest(ref.digest) if to else ref


def publish_folder(out_dir: Path, verifier: Identity, state_dir: Path, now: datetime,
                   options: StoreOptions | None = None, progress: Progress | None = None,
                   to: str | None = None, log: LogOptions | None = None) -> Published:
    """``attest --publish``: re-verify OUT_DIR, push its credential (re-signing the state's list) or its attempt
    record, to the run's repository or ``to``; idempotent. With ``log``: the log goes up first (and the
    re-signed list is logged)."""
    result = _read_json(out_dir / "result.json", "result.json")
    ref = _target(result, to)
    assert ref.digest is not None
    if log is not None:
        refuse_same_repository(log, ref)
    vlog = VerifierLog(log, state_dir, verifier) if log is not None else None
    store = open_store(ref, options or StoreOptions())
    if not (out_dir / "credential.json").is_file() and (out_dir / ATTEMPT_RECORD_FILE).is_file():
        return _publish_attempt_record(out_dir, verifier, state_dir, store, ref, result, now, vlog)
    credential_bytes, credential, records, subject = verify_folder(out_dir, verifier, store, ref.digest, now)
    proof = read_proof(out_dir, credential_bytes)
    cred_id = str(credential.get("id"))
    with Ledger(state_dir) as ledger:
        attempt = ledger.attempt_of_credential(cred_id)
        list_uuid = ledger.list_of_credential(cred_id)
        if attempt is None or list_uuid is None:
            raise UsageError(f"attest --publish: credential {cred_id} was not issued from the state {state_dir} "
                             "(give the --state the run used)")
        sl = ledger.status_list_by_uuid(list_uuid)
        signed = signed_status_list(ledger, sl, verifier, now)
        list_file = out_dir / "status-list.json"
        list_bytes = json.dumps(signed, indent=2).encode() + b"\n"
        list_file.write_bytes(list_bytes)
        ledger.record_publication(sl.uuid, list_file.resolve().as_uri(), sha256_digest(list_bytes), now)
        if vlog is not None:
            vlog.append([status_entry(signed, now, verifier.did)])

        def push() -> Published:
            if vlog is not None:
                vlog.publish()
            return push_result(store, subject, ledger, sl, signed, credential_bytes, records, cred_id, now, progress,
                               verifier, proof)

        return publish_attempt(ledger, attempt.id, out_dir, push)


def _publish_attempt_record(out_dir: Path, verifier: Identity, state_dir: Path, store: Store, ref: Reference,
                            result: Any, now: datetime, vlog: VerifierLog | None = None) -> Published:
    """Push a NOT ISSUED run's attempt record and its proof (the ledger's attempt is marked published)."""
    assert ref.digest is not None
    raw, subject = verify_attempt_folder(out_dir, verifier, store, ref.digest, now)
    proof = read_proof(out_dir, raw)

    def push() -> Published:
        if vlog is not None:
            vlog.publish()
        return push_attempt_record(store, subject, raw, str(ref), proof)

    attempt_id = result.get("attempt") if isinstance(result, dict) else None
    with Ledger(state_dir) as ledger:
        attempt = ledger.attempt(attempt_id) if isinstance(attempt_id, int) else None
        if attempt is None or attempt.cartridge_manifest_digest != subject.digest:
            raise UsageError(f"attest --publish: attempt {attempt_id} of {out_dir} is not in the state {state_dir} "
                             "(give the --state the run used)")
        return publish_attempt(ledger, attempt.id, out_dir, push)


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
