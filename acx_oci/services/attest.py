"""``acx-oci attest``: an independent verifier re-runs a cartridge on a sealed held-out slice.

Order matters: everything that can refuse the run (ROM signature, independence
of the issuer, capability claimed, slice unsealable and matching its
published digests, cooldown) is checked before any game is played, and every
attempt - refused, not issued or issued - is logged in the ledger. Runs that
play start the cooldown whatever their result, so trying until lucky costs a
cooldown per try.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from acx_oci.crypto.digest import sha256_digest
from acx_oci.crypto.jcs import canonical
from acx_oci.crypto.keys import Identity
from acx_oci.crypto.seal import recipient_from_identity, seal
from acx_oci.egress.session import ModelSetup
from acx_oci.envimage import prepare_image
from acx_oci.errors import AcxError, RegistryError, UsageError
from acx_oci.evaluation import engine
from acx_oci.evaluation.solver import Solver
from acx_oci.model import benchmark as bmodel
from acx_oci.model import credential as cred_mod
from acx_oci.model import gamerecords, statuslist
from acx_oci.model.modelapi import declared_model
from acx_oci.model.rom import STATUS_VALID, STATUS_WARNING, runtime_digest, runtime_of, training_cutoff
from acx_oci.oci.open import open_store
from acx_oci.oci.ref import parse_reference
from acx_oci.oci.store import StoreOptions
from acx_oci.services import benchmark as bm
from acx_oci.services import certification, exposures
from acx_oci.services import models as models_mod
from acx_oci.services import publish as pub
from acx_oci.services import regression as regr
from acx_oci.services import transcripts as tx
from acx_oci.services.cartridge import LoadedCartridge, load_cartridge, rom_files
from acx_oci.services.environment import benchmark_image, environment_problems, image_digests
from acx_oci.services.ledger import Ledger
from acx_oci.services.publish import STATUS_LIST_VALIDITY, signed_status_list, status_base_url  # noqa: F401
from acx_oci.solvers.rom import RomSolver, materialize_rom, new_rom_dir, prove
from acx_oci.trust.trustfile import DEFAULT_MIN_GAMES, DEFAULT_SIGMA_MAX

TRANSCRIPT_SEAL_INFO = tx.TRANSCRIPT_SEAL_INFO
CREDENTIAL_VALIDITY = timedelta(days=365)
DEFAULT_COOLDOWN = timedelta(hours=24)
ISSUED, NOT_ISSUED, REFUSED = "issued", "not-issued", "refused"


@dataclass
class AttestRequest:
    cartridge_ref: str
    benchmark_ref: str
    verifier: Identity  # its ``did`` is the issuer
    solver: Solver | None  # None: the ROM solver (the ROM's own runtime, sandboxed); a Solver: a simulation
    out_dir: Path
    state_dir: Path
    jobs: int = 1  # games played at once (rated afterwards in draw order: the same result for any value)
    executor: Any = None  # None: a local pool; a services.executors.dask_cluster.DaskExecutor: a Dask cluster
    secret_paths: tuple[Path, ...] = ()  # the signing key file(s): the containment probes prove them absent
    games: int | None = None
    cooldown: timedelta = DEFAULT_COOLDOWN
    sigma_max: float = DEFAULT_SIGMA_MAX
    min_games: int = DEFAULT_MIN_GAMES
    store_options: StoreOptions = field(default_factory=StoreOptions)
    clock: Callable[[], datetime] | None = None
    progress: Callable[[int, int, str], None] | None = None  # (done, total, text)
    push: bool = True  # publish the status list and push the attestation next to the cartridge
    baseline_ref: str | None = None  # attest --baseline (else the ROM's policy.verification.regression.baseline)
    baseline_solver: Solver | None = None  # the baseline's simulation when ``solver`` is the reference solver
    regression_tolerance: float = regr.DEFAULT_TOLERANCE
    models: models_mod.Models | None = None  # attest --models: where the models a ROM may call live
    replay: tx.ReplayExport | None = None  # attest --model-replay: answer every game from its recording


@dataclass
class AttestOutcome:
    status: str
    reasons: list[str]
    rom_digest: str | None = None
    manifest_digest: str | None = None
    result: engine.Result | None = None
    credential_path: Path | None = None
    status_list_path: Path | None = None
    result_path: Path | None = None
    record_paths: list[Path] = field(default_factory=list)
    attempt_id: int | None = None
    credential: dict[str, Any] | None = None
    attestation_digest: str | None = None
    status_list_ref: str | None = None
    push: Callable[[], pub.Published] | None = None  # set by the run, called once the attempt is logged
    publication_error: str | None = None  # the registry failed the push: signed, kept in out_dir, no cooldown
    replay: tx.ReplayReport | None = None  # attest --model-replay: which games reproduced the original's outcome

    @property
    def exit_code(self) -> int:
        return 3 if self.publication_error else {ISSUED: 0, NOT_ISSUED: 1}.get(self.status, 2)

    def to_json(self) -> dict[str, Any]:
        r = self.result
        return {
            "issued": self.status == ISSUED,
            "status": self.status,
            "reasons": self.reasons,
            "mu": r.rating.mu if r else None,
            "sigma": r.rating.sigma if r else None,
            "games": r.rated if r else 0,
            "passRate": r.pass_rate if r else None,
            "R": r.conservative if r else None,
            "acxLevel": r.level if r else None,
            "careerTier": r.tier if r else None,
            "romDigest": self.rom_digest,
            "credential": str(self.credential_path) if self.credential_path else None,
            "attestationDigest": self.attestation_digest,
            "statusListRef": self.status_list_ref,
            **({"publicationError": self.publication_error} if self.publication_error else {}),
            **(self.replay.to_json() if self.replay else {}),
        }


def _base_did(did: str | None) -> str | None:
    return did.split("#", 1)[0] if did else None


def independence_problems(verifier: Identity, cart: LoadedCartridge) -> list[str]:
    """The issuer must be neither the controller nor the ROM signer, by DID or by key."""
    problems = []
    mine = {verifier.did, verifier.did_key}
    for role, did in (("controller", cart.controller), ("ROM signer", cart.signer)):
        if _base_did(did) in mine:
            problems.append(f"independence: the issuer {verifier.did} is the cartridge's {role}; "
                            "a cartridge cannot be graded by its own author")
    if cart.signature.key == verifier.public_bytes and not any("ROM signer" in p for p in problems):
        problems.append(f"independence: the ROM was signed with the issuer's own key ({verifier.did_key}); "
                        "a cartridge cannot be graded by its own author")
    return problems


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def attest(req: AttestRequest) -> AttestOutcome:
    from datetime import UTC

    clock = req.clock or (lambda: datetime.now(UTC))
    verifier = req.verifier
    if verifier.did.startswith("did:key:") and verifier.did != verifier.did_key:
        raise UsageError(f"--issuer {verifier.did} is a did:key of another key than --key ({verifier.did_key})")
    cart_ref, bench_ref = parse_reference(req.cartridge_ref), parse_reference(req.benchmark_ref)
    cart_store = open_store(cart_ref, req.store_options)
    bench_store = open_store(bench_ref, req.store_options)
    # Pull both by digest: whatever a tag points to later, this run graded these exact bytes.
    cart_digest = cart_store.resolve(cart_ref.target).digest
    cart = load_cartridge(cart_store, cart_digest, None)
    bench_digest = bench_store.resolve(bench_ref.target).digest
    remote = bm.fetch(bench_store, bench_digest)
    descriptor = remote.descriptor
    runtime = runtime_of(cart.rom)
    model_entry, model_problem = tx.select_model(req.models, declared_model(runtime), req.replay) \
        if req.solver is None else (None, None)
    setup = tx.model_setup(model_entry, req.replay, req.executor)  # a missing local key: bad input, up front
    if req.solver is not None and req.solver.descriptor().get("name") != "reference":
        raise UsageError("attest: only the ROM solver (the signed ROM, sandboxed) or the reference simulation "
                         "may issue; nothing that signs runs another command")
    solver_desc = req.solver.descriptor() if req.solver is not None else \
        {"name": "rom", "version": 1, "runtimeDigest": runtime_digest(runtime) if runtime else None}
    pinned_cart = str(cart_ref.with_digest(cart_digest))
    outcome = AttestOutcome(REFUSED, [], cart.rom_digest, cart_digest)
    baseline_ref = req.baseline_ref or regr.policy_baseline(cart.rom)
    if baseline_ref and req.solver is not None and req.baseline_solver is None:
        raise UsageError("attest --baseline with the reference solver needs --baseline-competence N "
                         "(the baseline's simulated skill)")

    reasons: list[str] = []
    if cart.signature_status not in (STATUS_VALID, STATUS_WARNING):
        detail = "; ".join(cart.problems) if cart.problems else cart.signature.reason
        reasons.append(f"ROM signature is {cart.signature_status} ({detail}); only an intact ROM is graded")
    reasons += independence_problems(verifier, cart)
    reasons += environment_problems(descriptor["benchmark"], runtime)
    reasons += tx.replay_problems(req.replay, cart, str(descriptor["benchmarkDigest"]), req.models, baseline_ref)
    if req.solver is None and runtime is None:
        reasons.append("runtime: the ROM declares no runtime, so there is nothing a verifier can run; "
                       "only a simulation (--solver reference) is possible")
    claimed = {c.id for c in cart.capabilities}
    if remote.capability["id"] not in claimed:
        shown = ", ".join(c.display(with_domain=True) for c in cart.capabilities) or "none"
        reasons.append(f"capability: the cartridge does not claim {bmodel.capability_display(remote.capability)}, "
                       f"which benchmark {remote.id}@{remote.version} measures (it claims: {shown})")
    unsealed: bm.Unsealed | None = None
    if not reasons:
        try:
            unsealed = bm.unseal_remote(remote, verifier)
        except AcxError as exc:
            reasons.append(f"benchmark: {exc}")
    baseline: regr.Baseline | None = None
    if baseline_ref and not reasons:
        baseline, problems = regr.load_baseline(baseline_ref, req.cartridge_ref, cart, req.store_options,
                                                 rom_solver=req.solver is None)
        if baseline is not None and not problems:
            problems = regr.find_credential(baseline, verifier, remote, reference=req.solver is not None,
                                            now=clock())
        reasons += problems
    exam_cert: dict[str, Any] = {}
    if unsealed is not None:
        exam_cert, problem = _exam_certification(bench_store, remote, unsealed)
        if problem:
            reasons.append(problem)
    params = engine.Params(games=req.games, sigma_max=req.sigma_max, min_games=req.min_games)
    cutoff = model_entry.training_cutoff if model_entry else training_cutoff(cart.rom)  # the verifier's, if any
    eligible: list[dict[str, Any]] = []
    if unsealed is not None:
        eligible = bmodel.post_cutoff(list(unsealed.held_out), cutoff)
        if eligible:
            params.resolve_games(len(eligible))  # a bad --games is a usage error, before any cooldown

    with Ledger(req.state_dir) as ledger:
        common = dict(cartridge_ref=pinned_cart, manifest_digest=cart_digest, rom_digest=cart.rom_digest,
                      benchmark_id=remote.id, benchmark_version=remote.version,
                      benchmark_digest=str(descriptor["benchmarkDigest"]), issuer=verifier.did, solver=solver_desc)
        if model_problem and not reasons:
            outcome.status, reasons = NOT_ISSUED, [model_problem]
        if reasons or unsealed is None:
            outcome.attempt_id = ledger.log_refusal(now=clock(), reasons=reasons, **common)  # type: ignore[arg-type]
            outcome.reasons = reasons
            return outcome
        attempt_id, refusal = ledger.begin_attempt(now=clock(), cooldown=req.cooldown, **common)  # type: ignore[arg-type]
        outcome.attempt_id = attempt_id
        if refusal is not None:
            outcome.reasons = [refusal.reason()]
            return outcome
        qualifying = bmodel.rateable(eligible)
        if qualifying < req.min_games:
            outcome.status = NOT_ISSUED
            outcome.reasons = [f"insufficient_post_cutoff_exams: {qualifying} held-out exams were published after "
                               f"the ROM's training cutoff {cutoff}; the gate needs at least {req.min_games}"]
            ledger.finish_attempt(attempt_id, now=clock(), issued=False, reasons=outcome.reasons)
            return outcome
        try:
            _run(req, outcome, cart, unsealed, eligible, params, ledger, clock, exam_cert, baseline, setup)
        except BaseException as exc:  # a registry failure is a lane error, not an attempt: no cooldown
            ledger.finish_attempt(attempt_id, now=clock(), issued=False, reasons=["aborted"], aborted=True,
                                  starts_cooldown=not isinstance(exc, RegistryError))
            raise
        r = outcome.result
        assert r is not None
        ledger.finish_attempt(attempt_id, now=clock(), issued=outcome.status == ISSUED, reasons=outcome.reasons,
                              mu=r.rating.mu, sigma=r.rating.sigma, games=r.rated, acx_level=r.level,
                              credential_id=str(outcome.credential["id"]) if outcome.credential else None)
        if outcome.push is not None:
            _publish(req, outcome, ledger, attempt_id)
    return outcome


def _publish(req: AttestRequest, outcome: AttestOutcome, ledger: Ledger, attempt_id: int) -> None:
    assert outcome.push is not None
    hint = " ".join([f"--key {req.secret_paths[0]}" if req.secret_paths else "--key KEY", f"--state {req.state_dir}"])
    try:
        published = pub.publish_attempt(ledger, attempt_id, req.out_dir, outcome.push, hint)
    except RegistryError as exc:
        outcome.publication_error = str(exc)
        return
    outcome.attestation_digest = published.attestation_digest
    outcome.status_list_ref = published.status_list_ref


def _exam_certification(store: Any, remote: bm.RemoteBenchmark, unsealed: bm.Unsealed
                        ) -> tuple[dict[str, Any], str | None]:
    """What the benchmark says of its exams, checked before any game: a certified suite must carry a signed
    certification referrer covering every held-out exam; the credential names it (or the allowance)."""
    state = remote.manifest.annotations.get(bmodel.ANN_CERTIFICATION, "not-exam-form")
    if state != "certified":
        return {"acx:examCertification": state}, None
    found, problems = certification.find_certification(
        store, remote.manifest.digest, unsealed.bench.digest, [str(t["id"]) for t in unsealed.held_out])
    if found is None:
        return {}, ("exam_certification: the benchmark says it is certified, but no certification referrer "
                    f"verifies ({'; '.join(problems[:3]) or 'none found'})")
    return {"acx:examCertification": "certified", "acx:examCertificationDigest": found.digest,
            "acx:examCertifier": found.certifier}, None


def _held_in(req: AttestRequest, cart: LoadedCartridge, unsealed: bm.Unsealed, baseline: regr.Baseline,
             solver: Solver, stack: contextlib.ExitStack, new_out: float) -> tuple[list[str], dict[str, Any]]:
    """Both ROMs on the public (held-in) slice with the same kind of solver; the regression verdict."""
    held = {str(t["id"]) for t in unsealed.held_out}
    public = [t for t in unsealed.bench.tasks if str(t["id"]) not in held]
    base_solver = req.baseline_solver if req.solver is not None else \
        stack.enter_context(_rom_solver(req, baseline.cart, benchmark_image(unsealed.bench.meta), baseline.store,
                                        models_mod.setup_for(req.models, runtime_of(baseline.cart.rom), req.executor)))
    assert base_solver is not None and baseline.held_out_r is not None
    new_in = regr.held_in_r(cart.rom_digest, unsealed, public, solver, req.jobs)
    base_in = regr.held_in_r(baseline.cart.rom_digest, unsealed, public, base_solver, req.jobs)
    regressed = regr.judge(new_out, new_in, baseline.held_out_r, base_in, req.regression_tolerance)
    return regressed, {"acx:heldInR": new_in, "acx:baseline": regr.credential_field(baseline, base_in)}


@contextlib.contextmanager
def _rom_solver(req: AttestRequest, cart: LoadedCartridge, image: str | None = None,
                store: Any = None, setup: ModelSetup | None = None) -> Iterator[RomSolver]:
    """Materialise the signed ROM read-only, prove containment in the games' own spec, and play with it.

    The probes run in exactly the spec every game uses (a model ROM's with a probe proxy on its socket and the
    model's real key searched for inside), with the verifier's key and state directory named: if any probe
    succeeds (or bubblewrap is missing) the proof is ``proven: false`` and every game is withheld.
    """
    runtime = runtime_of(cart.rom)
    assert runtime is not None  # refused before any attempt when absent
    store = store or open_store(parse_reference(req.cartridge_ref), req.store_options)
    if req.executor is not None:  # the ROM travels (digest-checked there); each worker proves its own sandbox
        yield req.executor.rom_solver(cart, store, image, (*req.secret_paths, req.state_dir), req.store_options, setup)
        return
    rom_dir = new_rom_dir()
    try:
        materialize_rom(rom_files(store, cart), rom_dir / "rom")
        # An environment image: its unpacked root (cached by digest) is / for probes, games and grading.
        rootfs, image_digest = prepare_image(image, req.store_options) if image else (None, None)
        # The provider key's file is the verifier's secret too: proven absent from the sandbox like --key.
        key_file = (Path(setup.entry.api_key_file),) if setup is not None and setup.entry.api_key_file else ()
        proof = prove((*req.secret_paths, req.state_dir, *key_file), rom_dir / "rom", runtime, rootfs, setup)
        proof["imageDigest"] = image_digest
        yield RomSolver(rom_dir / "rom", runtime, proof, rootfs=rootfs, model=setup)
    finally:
        shutil.rmtree(rom_dir, ignore_errors=True)


def _run(req: AttestRequest, outcome: AttestOutcome, cart: LoadedCartridge, unsealed: bm.Unsealed,
         held_out: list[dict[str, Any]], params: engine.Params, ledger: Ledger,
         clock: Callable[[], datetime], exam_cert: dict[str, Any], baseline: regr.Baseline | None = None,
         setup: ModelSetup | None = None) -> None:
    model = setup.entry if setup is not None else None
    verifier = req.verifier
    bench = unsealed.bench
    total = params.resolve_games(len(held_out))
    if req.progress:
        req.progress(0, total, "starting")

    def on_game(game: engine.Game, rating: Any) -> None:
        if req.progress:
            req.progress(game.number, total, f"{game.outcome}  mu={rating.mu:.2f} sigma={rating.sigma:.2f}")

    with contextlib.ExitStack() as stack:
        solver = req.solver if req.solver is not None else \
            stack.enter_context(_rom_solver(req, cart, benchmark_image(bench.meta), setup=setup))
        result = engine.run(rom_digest=cart.rom_digest, benchmark_digest=bench.digest, held_out=held_out,
                            commitment_key=unsealed.commitment_key, solver=solver, params=params, jobs=req.jobs,
                            on_game=on_game)
        regressed, held_in = _held_in(req, cart, unsealed, baseline, solver, stack,
                                                result.conservative) if baseline else ([], {})
    outcome.result = result
    outcome.replay, regressed = tx.judge(req.replay, result, regressed)  # a replay that diverged does not issue
    exposures.record(ledger, benchmark_digest=bench.digest, benchmark=f"{bench.id}@{bench.version}", entry=model,
                     games=((g.task_id, g.predicate) for g in result.games), now=clock())
    out = req.out_dir
    out.mkdir(parents=True, exist_ok=True)
    me = recipient_from_identity(verifier)
    records: list[gamerecords.GameRecord] = []
    games_json = []
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
        outcome.record_paths.append(path)
        entry: dict[str, Any] = {"game": g.number, "outcome": g.outcome, "detail": g.detail,
                                 "taskCommitment": g.predicate["taskCommitment"], "record": rec.digest,
                                 "path": str(path.relative_to(out))}
        if sealed_transcript is not None:
            tpath = _write(out / "transcripts" / f"game-{g.number:04d}.sealed.json", sealed_transcript)
            entry["transcript"] = str(tpath.relative_to(out))
        games_json.append(entry)
    outcome.reasons = regressed + list(result.reasons)
    outcome.status = ISSUED if result.issued and not regressed else NOT_ISSUED
    now = clock()
    if outcome.status == ISSUED:
        sl = ledger.status_list(now, status_base_url(verifier.did), issuer=verifier.did)
        cred_id = f"urn:uuid:{uuid.uuid4()}"
        index = ledger.allocate(sl.uuid, cred_id, now, outcome.attempt_id)
        evidence = [cred_mod.evidence_item(records[0].raw, game=1, inline=records[0].envelope)]
        evidence += [cred_mod.evidence_item(rec.raw, game=i) for i, rec in enumerate(records[1:], 2)]
        cap = bench.capability
        credential = cred_mod.issue(
            signer=verifier, issuer_did=verifier.did,
            subject_id=f"urn:acx:cartridge:{cart.id}@{cart.version}", capability_id=cap["id"],
            rating_mu=result.rating.mu, rating_sigma=result.rating.sigma, games_played=result.rated,
            acx_level=result.level, career_tier=result.tier, pass_rate=result.pass_rate, rom_digest=cart.rom_digest,
            manifest_digest=cart.manifest.digest, benchmark_id=bench.id, benchmark_version=bench.version,
            benchmark_digest=bench.digest, held_out_slice_digest=unsealed.held_out_slice_digest, evidence=evidence,
            status_entry=statuslist.status_entry(sl.url, index), valid_from=now, valid_until=now + CREDENTIAL_VALIDITY,
            achievement_name=f"ACX Level — {bmodel.capability_display(cap)}", credential_id=cred_id,
            solver=str(result.solver.get("name")), runtime_digest=result.solver.get("runtimeDigest"),
            training_cutoff=model.training_cutoff if model else training_cutoff(cart.rom),
            qualifying_exams=bmodel.rateable(held_out), exam_certification=exam_cert,
            image_digests=image_digests(g.predicate for g in result.games),
            extra={**held_in, **tx.credential_fields(model, result.games, outcome.replay)})
        outcome.credential = credential
        credential_bytes = json.dumps(credential, indent=2, ensure_ascii=False).encode() + b"\n"
        outcome.credential_path = _write(out / "credential.json", credential_bytes)
        signed_list = signed_status_list(ledger, sl, verifier, now)
        list_bytes = json.dumps(signed_list, indent=2).encode() + b"\n"
        outcome.status_list_path = _write(out / "status-list.json", list_bytes)
        ledger.record_publication(sl.uuid, outcome.status_list_path.resolve().as_uri(), sha256_digest(list_bytes),
                                  now)
        ledger.record_credential(cred_id, sha256_digest(credential_bytes), now)
        if req.push:
            raws = [r.raw for r in records]
            outcome.push = lambda: pub.push_result(
                open_store(parse_reference(req.cartridge_ref), req.store_options), cart.manifest.descriptor, ledger,
                sl, signed_list, credential_bytes, raws, cred_id, now, req.progress)
    doc = {
        **outcome.to_json(),
        "issuer": verifier.did,
        "attempt": outcome.attempt_id,
        "cartridge": {"reference": str(parse_reference(req.cartridge_ref).with_digest(cart.manifest.digest)),
                      "manifestDigest": cart.manifest.digest, "romDigest": cart.rom_digest,
                      "id": cart.id, "version": cart.version, "controller": cart.controller,
                      "signer": cart.signer, "signatureStatus": cart.signature_status},
        "benchmark": {"id": bench.id, "version": bench.version, "manifestDigest": unsealed.manifest_digest,
                      "benchmarkDigest": bench.digest, "heldOutSliceDigest": unsealed.held_out_slice_digest,
                      "capability": bench.capability},
        "run": result.summary(),
        "model": model.public() if model else None,
        **({"regression": held_in} if held_in else {}),
        "gameRecords": games_json,
        "statusList": str(outcome.status_list_path) if outcome.status_list_path else None,
    }
    outcome.result_path = _write(out / "result.json", json.dumps(doc, indent=2).encode() + b"\n")
