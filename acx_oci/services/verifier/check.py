"""Step one of ``attest``: load the cartridge and benchmark (by digest) and say why the run may not play.

Everything that can refuse a run is found here, before any game and before the ledger is written: the ROM
signature, the issuer's independence, the capability claimed, the slice unsealable and matching its
published digests, the baseline (named, or the previous version the ledger has a level for), the exam
certification. Bad input (a solver that may not sign, a missing
model key) is a ``UsageError`` raised here too, so a typo costs no cooldown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from acx_oci.crypto import Identity
from acx_oci.egress import ModelSetup
from acx_oci.errors import AcxError, UsageError
from acx_oci.model import STATUS_VALID, STATUS_WARNING, runtime_digest, runtime_of
from acx_oci.model import benchmark as bmodel
from acx_oci.model import modelapi as ma
from acx_oci.oci import Reference, Store
from acx_oci.rating import Solver
from acx_oci.services.artifacts import LoadedCartridge, certification, load_cartridge
from acx_oci.services.artifacts import benchmark as bm
from acx_oci.services.verifier import regression as regr
from acx_oci.services.verifier import transcripts as tx
from acx_oci.services.verifier.environment import benchmark_image_problems, draw_environment_problems
from acx_oci.services.verifier.ledger import Ledger, Subject
from acx_oci.services.verifier.request import AttestRequest
from acx_oci.solvers import ReferenceSolver
from acx_oci.urls import without_fragment


@dataclass(frozen=True)
class Loaded:
    """The cartridge and benchmark as fetched once, pinned by digest, with the stores they came from."""

    cart_ref: Reference  # as the caller gave it, parsed once
    cart_store: Store
    bench_store: Store
    cart: LoadedCartridge
    remote: bm.RemoteBenchmark
    solver_desc: dict[str, Any]
    model_entry: ma.ModelEntry | None
    model_problem: str | None  # the ROM calls a model the verifier has no entry for: NOT ISSUED, not refused
    setup: ModelSetup | None
    baseline_ref: str | None
    # the baseline's simulation (--baseline-competence, or for a baseline the ledger found the skill its own run
    # recorded), and how the previous version was settled (acx:previousVersion: named, ledger, none, own-level
    # or replay)
    baseline_solver: Solver | None = None
    previous_version: str = "named"

    @property
    def baseline_auto(self) -> bool:
        """The baseline is the previous version the ledger found (no --baseline, no policy named one)."""
        return self.previous_version == "ledger"

    @property
    def runtime(self) -> dict[str, Any] | None:
        """The ROM's declared runtime (None: only a simulation can play it)."""
        return runtime_of(self.cart.rom)

    @property
    def pinned(self) -> str:
        """The cartridge reference by digest: whatever a tag points to later, this run graded these bytes."""
        return str(self.cart_ref.with_digest(self.cart.manifest.digest))

    @property
    def benchmark_digest(self) -> str:
        """The benchmark's published ``benchmarkDigest``."""
        return str(self.remote.descriptor["benchmarkDigest"])


@dataclass(frozen=True)
class Checked:
    """Why the run may not play (empty: it may), and what the checks unsealed and found on the way."""

    reasons: tuple[str, ...]
    unsealed: bm.Unsealed | None = None
    baseline: regr.Baseline | None = None
    exam_cert: dict[str, Any] = field(default_factory=dict)


def _base_did(did: str | None) -> str | None:
    return without_fragment(did) if did else None


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


def check_issuer(verifier: Identity) -> None:
    """A did:key issuer must be the key's own DID."""
    if verifier.did.startswith("did:key:") and verifier.did != verifier.did_key:
        raise UsageError(f"--issuer {verifier.did} is a did:key of another key than --key ({verifier.did_key})")


def load(req: AttestRequest, cart_ref: Reference, cart_store: Store, bench_ref: Reference,
         bench_store: Store) -> Loaded:
    """Pull both by digest and settle what plays: the solver, the model entry, the baseline's reference."""
    cart = load_cartridge(cart_store, cart_store.resolve(cart_ref.target).digest, None)
    remote = bm.fetch(bench_store, bench_store.resolve(bench_ref.target).digest)
    runtime = runtime_of(cart.rom)
    replay, executor = req.models.replay, req.sandbox.executor
    model_entry, model_problem = tx.select_model(req.models.models, ma.declared_model(runtime), replay) \
        if req.rom_solver else (None, None)
    setup = tx.model_setup(model_entry, replay, executor)  # a missing local key: bad input, up front
    if req.solver is not None and req.solver.descriptor().get("name") != "reference":
        raise UsageError("attest: only the ROM solver (the signed ROM, sandboxed) or the reference simulation "
                         "may issue; nothing that signs runs another command")
    solver_desc = req.solver.descriptor() if req.solver is not None else \
        {"name": "rom", "version": 1, "runtimeDigest": runtime_digest(runtime) if runtime else None}
    baseline_ref = req.baseline.ref or regr.policy_baseline(cart.rom)
    if baseline_ref is None:
        ref, solver, why = _predecessor(req, cart, remote, solver_desc) if replay is None else (None, None, "replay")
        return Loaded(cart_ref, cart_store, bench_store, cart, remote, solver_desc, model_entry, model_problem,
                      setup, ref, solver, why)
    if req.solver is not None and req.baseline.solver is None:
        raise UsageError("attest --baseline with the reference solver needs --baseline-competence N "
                         "(the baseline's simulated skill)")
    return Loaded(cart_ref, cart_store, bench_store, cart, remote, solver_desc, model_entry, model_problem, setup,
                  baseline_ref, req.baseline.solver)


def _predecessor(req: AttestRequest, cart: LoadedCartridge, remote: bm.RemoteBenchmark,
                 solver_desc: dict[str, Any]) -> tuple[str | None, Solver | None, str]:
    """The previous version this verifier issued a level to (its ledger: same id, capability and benchmark,
    another ROM, not revoked), and the solver that replays it: the reference solver at the skill its run
    recorded, or None for the ROM solver (the baseline's own ROM plays)."""
    subject = Subject(cartridge_ref="", cartridge_manifest_digest=cart.manifest.digest, rom_digest=cart.rom_digest,
                      benchmark_id=remote.id, benchmark_version=remote.version, benchmark_digest="",
                      issuer=req.verifier.did, solver=solver_desc, cartridge_id=str(cart.id),
                      capability_id=str(remote.capability["id"]), cartridge_version=str(cart.version))
    with Ledger(req.state_dir) as ledger:
        prev, why = ledger.predecessor(subject)
    if prev is None:
        return None, None, why
    if prev.solver.get("name") != "reference":
        return prev.cartridge_ref, None, why
    competence = prev.solver.get("competence")
    if req.baseline.solver is not None:  # --baseline-competence: the verifier's word wins
        return prev.cartridge_ref, req.baseline.solver, why
    if not isinstance(competence, (int, float)) or isinstance(competence, bool):
        raise UsageError(f"attest: the previous version {prev.cartridge_ref} (found in the ledger) is a simulation "
                         "whose skill the ledger does not record (a rebuilt state?): give --baseline-competence N")
    return prev.cartridge_ref, ReferenceSolver(float(competence)), why


def _static_problems(req: AttestRequest, loaded: Loaded) -> list[str]:
    """What the fetched bytes alone refuse: signature, independence, environment, replay, runtime, capability."""
    cart, remote = loaded.cart, loaded.remote
    reasons: list[str] = []
    if cart.signature_status not in (STATUS_VALID, STATUS_WARNING):
        detail = "; ".join(cart.problems) if cart.problems else cart.signature.reason
        reasons.append(f"ROM signature is {cart.signature_status} ({detail}); only an intact ROM is graded")
    reasons += independence_problems(req.verifier, cart)
    reasons += benchmark_image_problems(remote.descriptor["benchmark"])  # the ROM's pin: once the tasks are known
    reasons += tx.model_replay_problems(req.models.replay, cart, loaded.benchmark_digest, req.models.models,
                                  loaded.baseline_ref)
    if req.rom_solver and loaded.runtime is None:
        reasons.append("runtime: the ROM declares no runtime, so there is nothing a verifier can run; "
                       "only a simulation (--solver reference) is possible")
    if remote.capability["id"] not in {c.id for c in cart.capabilities}:
        shown = ", ".join(c.display(with_domain=True) for c in cart.capabilities) or "none"
        reasons.append(f"capability: the cartridge does not claim {bmodel.capability_display(remote.capability)}, "
                       f"which benchmark {remote.id}@{remote.version} measures (it claims: {shown})")
    return reasons


def check(req: AttestRequest, loaded: Loaded, now: datetime) -> Checked:
    """Every reason to refuse, in the order a reader would ask; the slice is unsealed only if none so far."""
    reasons = _static_problems(req, loaded)
    if reasons:
        return Checked(tuple(reasons))
    try:
        unsealed = bm.unseal_remote(loaded.remote, req.verifier)
    except AcxError as exc:
        return Checked((f"benchmark: {exc}",))
    reasons += draw_environment_problems(unsealed.held_out, unsealed.bench.meta, loaded.runtime,
                                         executor=req.sandbox.executor is not None)
    baseline: regr.Baseline | None = None
    if loaded.baseline_ref:
        found = "ledger" if loaded.baseline_auto else "named"
        baseline, problems = regr.load_baseline(loaded.baseline_ref, loaded.cart_ref, loaded.cart,
                                                req.registry.store_options, rom_solver=req.rom_solver, found=found)
        if baseline is not None and not problems:
            problems = regr.find_credential(baseline, req.verifier, loaded.remote, reference=not req.rom_solver,
                                            now=now)
        if loaded.baseline_auto:  # fail closed: a predecessor the registry no longer shows must not dodge the check
            problems = [f"{p} (the previous version, found in this verifier's ledger: if its status list expired, "
                        "run acx-oci status-refresh; else name another with --baseline, or revoke its credential to "
                        "stop comparing with it)" for p in problems]
        reasons += problems
    exam_cert, problem = _exam_certification(loaded.bench_store, loaded.remote, unsealed, req.trusted_certifiers)
    if problem:
        reasons.append(problem)
    return Checked(tuple(reasons), unsealed, baseline, exam_cert)


def _exam_certification(store: Store, remote: bm.RemoteBenchmark, unsealed: bm.Unsealed,
                        certifiers: tuple[str, ...]) -> tuple[dict[str, Any], str | None]:
    """What the benchmark says of its exams, checked before any game: a certified suite must carry a signed
    certification referrer covering every held-out exam, by a certifier this verifier trusts (anyone can push
    a referrer); the credential names it (or the allowance)."""
    state = remote.manifest.annotations.get(bmodel.ANN_CERTIFICATION, "not-exam-form")
    if state != "certified":
        return {"acx:examCertification": state}, None
    keys = [bm.exam_key(t, unsealed.commitment_key) for t in unsealed.held_out]  # private exams: by commitment
    found, problems = certification.find_certification(store, remote.manifest.digest, unsealed.bench.digest, keys,
                                                       certifiers=certifiers)
    if found is None:
        return {}, ("exam_certification: the benchmark says it is certified, but no certification referrer by a "
                    f"certifier this verifier trusts (its own key, or attest --certifier DID) verifies "
                    f"({'; '.join(problems[:3]) or 'none found'})")
    return {"acx:examCertification": "certified", "acx:examCertificationDigest": found.digest,
            "acx:examCertifier": found.certifier,
            "acx:examClassification": certification.classification_claim(found.predicate, keys),
            "acx:examRelaxations": certification.relaxations_claim(found.predicate, keys),
            "acx:examPromotion": certification.promotion_claim(found.predicate, keys)}, None
