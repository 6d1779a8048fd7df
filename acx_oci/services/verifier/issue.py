"""Step five of ``attest``: sign what was played, and issue the level credential if the verdict says so.

Every game becomes a signed record in the output folder (its transcript sealed to the verifier: it would
reveal the held-out task); an issued run also gets a status-list index, the credential and the signed list.
``result.json`` is written last and names everything; the push is the next step, not this one.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from acx_oci import reasons as rc
from acx_oci.crypto import Identity, canonical, recipient_from_identity, sha256_digest
from acx_oci.crypto.seal import seal
from acx_oci.model import (
    SCOPE_ROM_CLAIM,
    VERDICT_NOT_ISSUED,
    AttemptCount,
    AttemptRecord,
    LevelCredential,
    gamerecords,
    grading,
    reason_pairs,
    sign_attempt_record,
    statuslist,
)
from acx_oci.model import benchmark as bmodel
from acx_oci.model import credential as cred_mod
from acx_oci.model import record_bytes as attempt_bytes
from acx_oci.rating import engine
from acx_oci.services.verifier import transcripts as tx
from acx_oci.services.verifier.check import Loaded
from acx_oci.services.verifier.environment import image_digests
from acx_oci.services.verifier.ledger import Ledger, StatusList
from acx_oci.services.verifier.outcome import summary_json
from acx_oci.services.verifier.plan import Plan, post_cutoff_claim
from acx_oci.services.verifier.play import IssueDecision
from acx_oci.services.verifier.publish import signed_status_list, status_base_url

TRANSCRIPT_SEAL_INFO = tx.TRANSCRIPT_SEAL_INFO
CREDENTIAL_VALIDITY = timedelta(days=365)


@dataclass(frozen=True)
class Records:
    """The run's signed game records, where they were written, and their entries in ``result.json``."""

    records: tuple[gamerecords.GameRecord, ...]
    paths: tuple[Path, ...]
    games_json: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Signed:
    """An issued credential and the status list that can revoke it, both signed and written to the folder."""

    credential: LevelCredential  # read back from the bytes written: what a consumer reads
    credential_bytes: bytes
    credential_id: str
    credential_path: Path
    status_list: StatusList
    signed_list: dict[str, Any]
    status_list_path: Path
    issued_at: datetime  # validFrom; the push records it as the publication time
    superseded: tuple[str, ...] = ()  # earlier credentials for the same ROM, benchmark, capability: now revoked


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def write_records(verifier: Identity, result: engine.Result, out: Path) -> Records:
    """Sign one record per game (a ROM game's names the digest of its sealed transcript) and write them."""
    out.mkdir(parents=True, exist_ok=True)
    me = recipient_from_identity(verifier)
    records, paths, games_json = [], [], []
    for g in result.games:
        pred = dict(g.predicate)
        sealed_transcript = None
        if g.transcript is not None:
            # A transcript would reveal the held-out task: sealed to the verifier, never in the clear;
            # the record names the digest of the sealed bytes (per run: the sealing key is random).
            sealed_transcript = canonical(seal(g.transcript, [me], TRANSCRIPT_SEAL_INFO))
            if pred["solver"].get("name") == "rom":
                pred["transcriptDigest"] = sha256_digest(sealed_transcript)
        rec = gamerecords.sign_game(pred, verifier)
        records.append(rec)
        path = _write(out / "games" / f"game-{g.number:04d}.dsse.json", rec.raw)
        paths.append(path)
        entry: dict[str, Any] = {"game": g.number, "outcome": g.outcome, "detail": g.detail,
                                 "taskCommitment": g.predicate["taskCommitment"], "record": rec.digest,
                                 "path": str(path.relative_to(out))}
        if sealed_transcript is not None:
            tpath = _write(out / "transcripts" / f"game-{g.number:04d}.sealed.json", sealed_transcript)
            entry["transcript"] = str(tpath.relative_to(out))
        games_json.append(entry)
    return Records(tuple(records), tuple(paths), tuple(games_json))


def _claim(loaded: Loaded, plan: Plan, verdict: IssueDecision, evidence: list[dict[str, Any]],
           status_entry: dict[str, Any], credential_id: str, issuer: str, now: datetime,
           count: AttemptCount, scope: str) -> cred_mod.LevelClaim:
    """What the credential says, as one typed value."""
    cart, bench, result = loaded.cart, plan.unsealed.bench, verdict.played.result
    cap, model = bench.capability, loaded.model_entry
    return cred_mod.LevelClaim(
        issuer_did=issuer, subject_id=f"urn:acx:cartridge:{cart.id}@{cart.version}", capability_id=cap["id"],
        rating_mu=result.rating.mu, rating_sigma=result.rating.sigma, games_played=result.rated,
        acx_level=result.level, career_tier=result.tier, pass_rate=result.pass_rate, rom_digest=cart.rom_digest,
        manifest_digest=cart.manifest.digest, benchmark_id=bench.id, benchmark_version=bench.version,
        benchmark_digest=bench.digest, held_out_slice_digest=plan.unsealed.held_out_slice_digest, evidence=evidence,
        status_entry=status_entry, valid_from=now, valid_until=now + CREDENTIAL_VALIDITY,
        achievement_name=f"ACX Level — {bmodel.capability_display(cap)}", credential_id=credential_id,
        solver=str(result.solver.get("name")), runtime_digest=result.solver.get("runtimeDigest"),
        training_cutoff=plan.cutoff,
        qualifying_exams=plan.qualifying, post_cutoff=post_cutoff_claim(plan, result),
        exam_certification=plan.exam_cert,
        image_digests=image_digests(g.predicate for g in result.games),
        extra={**verdict.played.held_in, **tx.credential_fields(model, result.games, verdict.replay),
               "acx:harnessReview": result.review.to_json(), **_customer_exams(plan, result),
               **_grading(result)},
        attempt=count, cooldown_scope=scope, previous_version=loaded.previous_version)


def _grading(result: engine.Result) -> dict[str, Any]:
    """``acx:grading``: how the games' exams were graded (model/grading.py); empty lists when no game was
    graded (each ended before its grade), so that only a credential from before issue 46 lacks it."""
    return {"acx:grading": grading.claim(g.predicate for g in result.games) or {"modes": [], "tamperChecks": []}}


def _customer_exams(plan: Plan, result: engine.Result) -> dict[str, Any]:
    """``acx:customerExams: true`` when a played game was a customer's exam (which ones, the credential never says)."""
    played = {g.task_id for g in result.games}
    owned = any(bmodel.customer_of(t) is not None for t in plan.unsealed.held_out if str(t["id"]) in played)
    return {"acx:customerExams": True} if owned else {}


def issue_credential(verifier: Identity, loaded: Loaded, plan: Plan, verdict: IssueDecision, records: Records,
                     ledger: Ledger, attempt_id: int, now: datetime, out: Path) -> Signed:
    """Allocate a status index, sign the credential and the list, write both and note them in the ledger.

    The list signed here also revokes every earlier credential of this issuer for the same ROM, benchmark
    and capability (``superseded``): one status-list update publishes the new level and retires the old.
    """
    sl = ledger.status_list(now, status_base_url(verifier.did), issuer=verifier.did)
    cred_id = f"urn:uuid:{uuid.uuid4()}"
    index = ledger.allocate(sl.uuid, cred_id, now, attempt_id)
    recs = records.records
    evidence = [cred_mod.evidence_item(recs[0].raw, game=1, inline=recs[0].envelope)]
    evidence += [cred_mod.evidence_item(rec.raw, game=i) for i, rec in enumerate(recs[1:], 2)]
    mine = ledger.attempt(attempt_id)
    claim = _claim(loaded, plan, verdict, evidence, statuslist.status_entry(sl.url, index), cred_id, verifier.did, now,
                   ledger.attempt_count(attempt_id), (mine.cooldown_scope if mine else None) or SCOPE_ROM_CLAIM)
    superseded = tuple(ledger.superseded_credentials(attempt_id))
    for older in superseded:
        ledger.revoke(older, now, rc.SUPERSEDED)
    credential = cred_mod.issue(claim, verifier)
    credential_bytes = json.dumps(credential, indent=2, ensure_ascii=False).encode() + b"\n"
    credential_path = _write(out / "credential.json", credential_bytes)
    signed_list = signed_status_list(ledger, sl, verifier, now)
    list_bytes = json.dumps(signed_list, indent=2).encode() + b"\n"
    list_path = _write(out / "status-list.json", list_bytes)
    ledger.record_publication(sl.uuid, list_path.resolve().as_uri(), sha256_digest(list_bytes), now)
    ledger.record_credential(cred_id, sha256_digest(credential_bytes), now)
    return Signed(LevelCredential.read(credential_bytes, str(credential_path)), credential_bytes, cred_id,
                  credential_path, sl, signed_list, list_path, now, superseded)


def write_attempt_record(verifier: Identity, loaded: Loaded, plan: Plan, verdict: IssueDecision, ledger: Ledger,
                         attempt_id: int, now: datetime, out: Path) -> Path:
    """A NOT ISSUED run that played: its signed attempt record (verdict, reason codes, rating; no held-out
    content), written as ``attempt-record.json`` (RFC 8785 bytes: a republication pushes the same blob)."""
    cart, bench, result = loaded.cart, plan.unsealed.bench, verdict.played.result
    record = AttemptRecord(
        issuer=verifier.did, valid_from=now, cartridge_id=str(cart.id), rom_digest=cart.rom_digest,
        cartridge_manifest_digest=cart.manifest.digest, benchmark=f"{bench.id}@{bench.version}",
        benchmark_digest=bench.digest, capability=str(bench.capability["id"]),
        attempt=ledger.attempt_count(attempt_id), verdict=VERDICT_NOT_ISSUED,
        reasons=reason_pairs(verdict.reasons, rc.ERROR),  # the gate's and the judge's reasons start with a code
        mu=result.rating.mu, sigma=result.rating.sigma, acx_level=result.level, games_played=result.rated)
    return _write(out / "attempt-record.json", attempt_bytes(sign_attempt_record(record, verifier)))


def write_result(issuer: str, attempt_id: int | None, loaded: Loaded, plan: Plan, verdict: IssueDecision,
                 records: Records, signed: Signed | None, out: Path, look: bool = False) -> Path:
    """``result.json``: the run as the outcome will report it (not yet pushed), plus everything it names."""
    cart, unsealed, result = loaded.cart, plan.unsealed, verdict.played.result
    bench, model, held_in = unsealed.bench, loaded.model_entry, verdict.played.held_in
    doc = {
        **summary_json(verdict.status, verdict.reasons, result, cart.rom_digest,
                       signed.credential_path if signed else None, verdict.replay),
        "issuer": issuer,
        "attempt": attempt_id,
        "cartridge": {"reference": loaded.pinned, "manifestDigest": cart.manifest.digest,
                      "romDigest": cart.rom_digest, "id": cart.id, "version": cart.version,
                      "controller": cart.controller, "signer": cart.signer, "signatureStatus": cart.signature_status},
        "benchmark": {"id": bench.id, "version": bench.version, "manifestDigest": unsealed.manifest_digest,
                      "benchmarkDigest": bench.digest, "heldOutSliceDigest": unsealed.held_out_slice_digest,
                      "capability": bench.capability},
        "run": result.summary(),
        "model": model.public() if model else None,
        **({"regression": held_in} if held_in else {}),
        "gameRecords": list(records.games_json),
        "statusList": str(signed.status_list_path) if signed else None,
        # what a credential off this run says of its exams, issued or not (a look shows it too)
        "examCertification": plan.exam_cert, "customerExams": bool(_customer_exams(plan, result)),
        **({"look": True} if look else {}),
    }
    return _write(out / "result.json", json.dumps(doc, indent=2).encode() + b"\n")
