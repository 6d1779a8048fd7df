"""``acx-oci attest``: an independent verifier re-runs a cartridge on a sealed held-out slice.

A straight sequence of steps, each taking values and returning one: load and check
(:mod:`check`) -> plan the draw (:mod:`plan`) -> play, rate and judge
(:mod:`play`) -> issue (:mod:`issue`) -> publish. Order matters: everything that can
refuse the run is checked before any game is played, and every attempt - refused, not issued or
issued - is logged in the ledger, with its signed result, before anything is pushed. Runs that play
start the cooldown whatever their result or publication, so trying until lucky costs a cooldown per try.
The cartridge's store is opened once and closed when the run ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from acx_oci import reasons
from acx_oci.crypto import did_key
from acx_oci.errors import Interrupted, RegistryError
from acx_oci.oci import Store, StoreOptions, open_store, parse_reference
from acx_oci.services.verifier import exposures
from acx_oci.services.verifier import publish as pub
from acx_oci.services.verifier.check import Checked, Loaded, check, check_issuer, independence_problems, load
from acx_oci.services.verifier.issue import (
    CREDENTIAL_VALIDITY,
    TRANSCRIPT_SEAL_INFO,
    Records,
    Signed,
    issue_credential,
    write_attempt_record,
    write_records,
    write_result,
)
from acx_oci.services.verifier.ledger import Ledger, Subject
from acx_oci.services.verifier.log import Logged, VerifierLog, attempt_entry, refuse_same_repository, status_entry
from acx_oci.services.verifier.log import write_proof as write_log_proof
from acx_oci.services.verifier.outcome import (
    ISSUED,
    NOT_ISSUED,
    REFUSED,
    AttestOutcome,
    Issued,
    NotIssued,
    Refused,
    RunFiles,
)
from acx_oci.services.verifier.plan import Plan, plan_draw, shortfall
from acx_oci.services.verifier.play import IssueDecision, judge, play
from acx_oci.services.verifier.publish import STATUS_LIST_VALIDITY, signed_status_list, status_base_url
from acx_oci.services.verifier.request import (
    DEFAULT_COOLDOWN,
    AttestRequest,
    BaselineOptions,
    GateOptions,
    ModelOptions,
    RegistryOptions,
    SandboxOptions,
)
from acx_oci.services.verifier.revoke import republish

__all__ = ["CREDENTIAL_VALIDITY", "DEFAULT_COOLDOWN", "ISSUED", "NOT_ISSUED", "REFUSED", "STATUS_LIST_VALIDITY",
           "TRANSCRIPT_SEAL_INFO", "AttestOutcome", "AttestRequest", "BaselineOptions", "GateOptions", "Issued",
           "ModelOptions", "NotIssued", "Refused", "RegistryOptions", "SandboxOptions", "attest",
           "independence_problems", "signed_status_list", "status_base_url"]


@contextlib.contextmanager
def opened(reference: Any, options: StoreOptions) -> Iterator[Store]:
    """A store for the run's lifetime, closed at its end however the run ends."""
    with open_store(reference, options) as store:
        yield store


def attest(req: AttestRequest) -> AttestOutcome:
    """Load and check, plan, play, judge, issue, publish: the outcome says which step the run ended at."""
    check_issuer(req.verifier)
    cart_ref, bench_ref = parse_reference(req.cartridge_ref), parse_reference(req.benchmark_ref)
    options = req.registry.store_options
    vlog = None
    if req.registry.log is not None:  # before any game: a log in the wrong place, or a broken one, refuses the run
        refuse_same_repository(req.registry.log, cart_ref)
        vlog = VerifierLog(req.registry.log, req.state_dir, req.verifier)
    with opened(cart_ref, options) as cart_store, opened(bench_ref, options) as bench_store:
        loaded = load(req, cart_ref, cart_store, bench_ref, bench_store)
        checked = check(req, loaded, req.now())
        with contextlib.ExitStack() as stack:
            if checked.baseline is not None:  # closed at the run's end (closing twice is harmless)
                stack.enter_context(checked.baseline.store)
            plan = plan_draw(req.gate, loaded, checked) if checked.unsealed is not None else None
            with Ledger(req.state_dir) as ledger:
                return _attempt(req, loaded, checked, plan, ledger, vlog)


def _subject(req: AttestRequest, loaded: Loaded) -> Subject:
    """What the ledger files an attempt under: the pinned cartridge and its claim, the benchmark, the issuer."""
    cart, remote = loaded.cart, loaded.remote
    return Subject(cartridge_ref=loaded.pinned, cartridge_manifest_digest=cart.manifest.digest,
                   rom_digest=cart.rom_digest, benchmark_id=remote.id, benchmark_version=remote.version,
                   benchmark_digest=loaded.benchmark_digest, issuer=req.verifier.did, solver=loaded.solver_desc,
                   cartridge_id=str(cart.id), capability_id=str(remote.capability["id"]),
                   publisher_key=did_key(cart.signature.key) if cart.signature.key else None,
                   cartridge_version=str(cart.version))


def _counting(req: AttestRequest) -> tuple[AttestRequest, list[bool]]:
    """The request with a progress hook that notes the first game played: stopped before it, no attempt."""
    played = [False]
    inner = req.progress

    def progress(done: int, total: int, text: str) -> None:
        if done >= 1:
            played[0] = True
        if inner is not None:
            inner(done, total, text)

    return replace(req, progress=progress), played


def _interrupted(req: AttestRequest, played: bool) -> str:
    """What a Ctrl-C left: after the first game the attempt counts (so a re-run waits), before it nothing does."""
    if not played:
        return "interrupted before the first game: no attempt was counted, run it again at any time"
    cooldown = req.gate.cooldown
    wait = f"; its cooldown runs until {(req.now() + cooldown).isoformat(timespec='seconds')}" \
        if cooldown > timedelta(0) else ""
    return f"interrupted after the first game: the attempt counts (aborted, nothing signed or pushed){wait}"


def _attempt(req: AttestRequest, loaded: Loaded, checked: Checked, plan: Plan | None,
             ledger: Ledger, vlog: VerifierLog | None = None) -> AttestOutcome:
    """Log the attempt (or the refusal), play it, seal its result in the ledger, then publish.

    From the first game on, the run is an attempt: the cooldown it started stays, whether the run ends
    in a verdict, a Ctrl-C or a registry that fails (or vetoes) the push.
    """
    cart = loaded.cart
    ids = (cart.rom_digest, cart.manifest.digest)
    subject = _subject(req, loaded)
    if checked.reasons or plan is None:
        attempt_id = ledger.log_refusal(subject, now=req.now(), reasons=list(checked.reasons))
        return Refused(checked.reasons, *ids, attempt_id)
    if loaded.model_problem:  # the verifier cannot reach the ROM's model: counted as not issued, no cooldown
        attempt_id = ledger.log_refusal(subject, now=req.now(), reasons=[loaded.model_problem])
        return NotIssued((loaded.model_problem,), *ids, attempt_id)
    if req.gate.below_floor():
        return _look(req, loaded, plan, ledger)
    attempt_id, refusal = ledger.begin_attempt(subject, now=req.now(), cooldown=req.gate.cooldown,
                                               scope=req.gate.cooldown_scope)
    if refusal is not None:
        return Refused((refusal.reason(),), *ids, attempt_id)
    short = shortfall(plan, req.gate.min_games)
    if short:  # refused by the plan, before any game: a refusal, no attempt, no cooldown (still exit 1)
        ledger.finish_attempt(attempt_id, now=req.now(), issued=False, reasons=[short], refused=True)
        return NotIssued((short,), *ids, attempt_id)
    counted, played = _counting(req)
    try:
        verdict = judge(counted, play(counted, loaded, plan))
        records, signed, result_path, record_path = _sign(req, loaded, plan, verdict, ledger, attempt_id)
    except BaseException as exc:  # stopped (Ctrl-C, a failure): an attempt once its first game was played
        ledger.finish_attempt(attempt_id, now=req.now(), issued=False, reasons=["aborted"], aborted=True,
                              starts_cooldown=played[0])
        if isinstance(exc, KeyboardInterrupt):
            raise Interrupted(_interrupted(req, played[0])) from None
        raise
    r = verdict.played.result
    ledger.finish_attempt(attempt_id, now=req.now(), issued=signed is not None, reasons=list(verdict.reasons),
                          mu=r.rating.mu, sigma=r.rating.sigma, games=r.rated, acx_level=r.level,
                          credential_id=signed.credential_id if signed else None, run_dir=str(req.out_dir.resolve()))
    files = RunFiles(result_path, records.paths)
    logged = _log(req, vlog, loaded, verdict, signed, record_path) if vlog is not None else None
    if signed is None:
        published, error = _publish_record(req, loaded, ledger, attempt_id, record_path, vlog, logged) \
            if req.registry.push and record_path is not None else (None, None)
        return NotIssued(verdict.reasons, *ids, attempt_id, r, files, verdict.replay, published, error,
                         _served(logged, vlog))
    published, error = _publish(req, loaded, ledger, attempt_id, records, signed, vlog, logged) \
        if req.registry.push else (None, None)
    return Issued(verdict.reasons, *ids, attempt_id, r, files, signed.credential, signed.credential_path,
                  signed.status_list_path, verdict.replay, published, error, _served(logged, vlog))


def _look(req: AttestRequest, loaded: Loaded, plan: Plan, ledger: Ledger) -> NotIssued:
    """A gate looser than the floor: play and show the games; no credential, status entry, attempt or referrer.

    The reference design: no credential unless sigma < 1.5 over >= 30 games. Lower flags are the verifier's own
    look at the games: its ledger counts no attempt and starts no cooldown, and nothing is pushed. The game
    records are signed and kept in the run's folder (what this verifier played, for its own audit and a
    replay), never published. What a model endpoint was shown is recorded (``exposures``): it saw those tasks.
    """
    ids = (loaded.cart.rom_digest, loaded.cart.manifest.digest)
    floor = f"{reasons.BELOW_FLOOR}: {'; '.join(req.gate.below_floor())}: a look (played and shown; no " \
            "credential, no attempt counted, nothing pushed)"
    short = shortfall(plan, req.gate.min_games)
    if short:
        return NotIssued((floor, short), *ids, None, look=True)
    try:
        verdict = judge(req, play(req, loaded, plan))
    except KeyboardInterrupt:
        raise Interrupted("interrupted: a look below the floor counts no attempt, run it again at any time") from None
    verdict = replace(verdict, status=NOT_ISSUED, reasons=(floor, *verdict.reasons))
    result, bench = verdict.played.result, plan.unsealed.bench
    exposures.record(ledger, benchmark_digest=bench.digest, benchmark=f"{bench.id}@{bench.version}",
                     entry=loaded.model_entry, games=((g.task_id, g.predicate) for g in result.games), now=req.now())
    records = write_records(req.verifier, result, req.out_dir)
    path = write_result(req.verifier.did, None, loaded, plan, verdict, records, None, req.out_dir, look=True)
    return NotIssued(verdict.reasons, *ids, None, result, RunFiles(path, records.paths), verdict.replay, look=True)


def _log(req: AttestRequest, vlog: VerifierLog, loaded: Loaded, verdict: IssueDecision, signed: Signed | None,
         record_path: Path | None) -> Logged | None:
    """Append the attempt (and an issued run's status list) to the log: after the ledger counted it, before
    any push; the proof goes into the run's folder. A run with no signed document (no game) is not logged."""
    record = signed.credential_bytes if signed is not None else \
        record_path.read_bytes() if record_path is not None else None
    if record is None:
        return None
    cart, r, now = loaded.cart, verdict.played.result, req.now()
    entries = [attempt_entry(
        time=signed.issued_at if signed else now, issuer=req.verifier.did, cartridge_id=str(cart.id),
        rom_digest=cart.rom_digest, benchmark_digest=loaded.benchmark_digest,
        capability=str(loaded.remote.capability["id"]), issued=signed is not None, reasons=verdict.reasons,
        record=record, mu=r.rating.mu, sigma=r.rating.sigma, level=r.level,
        publisher=did_key(cart.signature.key) if cart.signature.key else None)]
    if signed is not None:
        entries.append(status_entry(signed.signed_list, signed.issued_at, req.verifier.did))
    appended, proof = vlog.append(entries)
    logged = vlog.logged(appended, proof, push=False)
    write_log_proof(req.out_dir, logged)
    return logged


def _served(logged: Logged | None, vlog: VerifierLog | None) -> Logged | None:
    """Whether the log's repository serves the entry (it goes up first, inside the push, which may fail later)."""
    if logged is None or vlog is None:
        return logged
    return replace(logged, published=vlog.served >= logged.size)


def _sign(req: AttestRequest, loaded: Loaded, plan: Plan, verdict: IssueDecision, ledger: Ledger,
          attempt_id: int) -> tuple[Records, Signed | None, Any, Path | None]:
    """Record the exposures, sign the game records and the credential (issued) or the attempt record (not);
    write ``result.json``."""
    result, bench = verdict.played.result, plan.unsealed.bench
    exposures.record(ledger, benchmark_digest=bench.digest, benchmark=f"{bench.id}@{bench.version}",
                     entry=loaded.model_entry, games=((g.task_id, g.predicate) for g in result.games), now=req.now())
    records = write_records(req.verifier, result, req.out_dir)
    now = req.now()
    signed = issue_credential(req.verifier, loaded, plan, verdict, records, ledger, attempt_id, now, req.out_dir) \
        if verdict.status == ISSUED else None
    record_path = write_attempt_record(req.verifier, loaded, plan, verdict, ledger, attempt_id, now, req.out_dir) \
        if signed is None else None
    path = write_result(req.verifier.did, attempt_id, loaded, plan, verdict, records, signed, req.out_dir)
    return records, signed, path, record_path


def _hint(req: AttestRequest) -> str:
    paths = req.sandbox.secret_paths
    log = [f"--log {req.registry.log.repository}"] if req.registry.log is not None else []
    return " ".join([f"--key {paths[0]}" if paths else "--key KEY", f"--state {req.state_dir}", *log])


def _publish_record(req: AttestRequest, loaded: Loaded, ledger: Ledger, attempt_id: int, record_path: Path,
                    vlog: VerifierLog | None = None, logged: Logged | None = None
                    ) -> tuple[pub.Published | None, str | None]:
    """Push a NOT ISSUED run's attempt record (the log first) next to the cartridge: failed attempts are public."""
    raw = record_path.read_bytes()
    proof = logged.proof.to_bytes() if logged is not None and logged.proof is not None else None

    def push() -> pub.Published:
        if vlog is not None:
            vlog.publish()
        return pub.push_attempt_record(loaded.cart_store, loaded.cart.manifest.descriptor, raw, loaded.pinned,
                                       proof)

    try:
        return pub.publish_attempt(ledger, attempt_id, req.out_dir, push, _hint(req)), None
    except RegistryError as exc:
        return None, str(exc)


def _publish(req: AttestRequest, loaded: Loaded, ledger: Ledger, attempt_id: int, records: Records,
             signed: Signed, vlog: VerifierLog | None = None,
             logged: Logged | None = None) -> tuple[pub.Published | None, str | None]:
    """Push the log, the list, then the attestation (through the store the run loaded the cartridge from)."""
    hint = _hint(req)
    now = signed.issued_at
    raws = [r.raw for r in records.records]
    proof = logged.proof.to_bytes() if logged is not None and logged.proof is not None else None

    def push() -> pub.Published:
        if vlog is not None:
            vlog.publish()
        return pub.push_result(loaded.cart_store, loaded.cart.manifest.descriptor, ledger, signed.status_list,
                               signed.signed_list, signed.credential_bytes, raws, signed.credential_id, now,
                               req.progress, req.verifier, proof)

    try:
        published = pub.publish_attempt(ledger, attempt_id, req.out_dir, push, hint)
    except RegistryError as exc:
        return None, str(exc)
    if signed.superseded:  # every copy of the list, wherever the older credential went, now revokes it
        republish(ledger, signed.status_list.uuid, req.verifier, req.now(), req.registry.store_options, vlog)
    return published, None
