"""Steps three and four of ``attest``: play the planned draw, then rate and judge what was played.

The ROM solver materialises the signed ROM read-only and proves containment in the very spec its games
run in before the first game; a baseline (regression acceptance) plays the public slice with the same kind
of solver. Judging adds what the engine's gate cannot know: a regression, a replay that diverged.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acx_oci.egress import ModelSetup
from acx_oci.envimage import prepare_image
from acx_oci.errors import UsageError
from acx_oci.model import runtime_of
from acx_oci.oci import Store
from acx_oci.rating import Solver, engine
from acx_oci.rating import accept_if as ai
from acx_oci.services.artifacts import LoadedCartridge, rom_files
from acx_oci.services.artifacts import benchmark as bm
from acx_oci.services.verifier import models as models_mod
from acx_oci.services.verifier import regression as regr
from acx_oci.services.verifier import transcripts as tx
from acx_oci.services.verifier.check import Loaded
from acx_oci.services.verifier.environment import (
    MAX_IMAGES,
    benchmark_image,
    draw_images,
    has_task_images,
    task_image,
)
from acx_oci.services.verifier.outcome import ISSUED, NOT_ISSUED
from acx_oci.services.verifier.plan import Plan
from acx_oci.services.verifier.request import AttestRequest
from acx_oci.solvers import RomSolver, RoutingSolver, materialize_rom, new_rom_dir, prove


@dataclass(frozen=True)
class Played:
    """The engine's result over the held-out draw and, with a baseline, the regression comparison."""

    result: engine.Result
    regressed: tuple[str, ...] = ()
    held_in: dict[str, Any] = field(default_factory=dict)  # acx:heldInR and acx:baseline (empty: no baseline)


@dataclass(frozen=True)
class IssueDecision:
    """Issue or not, and why; a replay's report on which games reproduced the original's outcome."""

    played: Played
    status: str  # ISSUED or NOT_ISSUED
    reasons: tuple[str, ...]
    replay: tx.ModelReplayReport | None = None


@contextlib.contextmanager
def rom_solver(req: AttestRequest, cart: LoadedCartridge, image: str | None, store: Store,
               setup: ModelSetup | None = None) -> Iterator[RomSolver]:
    """Materialise the signed ROM read-only, prove containment in the games' own spec, and play with it.

    The probes run in exactly the spec every game uses (a model ROM's with a probe proxy on its socket and the
    model's real key searched for inside), with the verifier's key and state directory named: if any probe
    succeeds (or bubblewrap is missing) the proof is ``proven: false`` and every game is withheld.
    """
    runtime = runtime_of(cart.rom)
    assert runtime is not None  # refused before any attempt when absent
    secrets = (*req.sandbox.secret_paths, req.state_dir)
    options = req.registry.store_options
    if req.sandbox.executor is not None:  # the ROM travels (digest-checked there); each worker proves its sandbox
        yield req.sandbox.executor.rom_solver(cart, store, image, secrets, options, setup)
        return
    rom_dir = new_rom_dir()
    try:
        materialize_rom(rom_files(store, cart), rom_dir / "rom")
        # An environment image: its unpacked root (cached by digest) is / for probes, games and grading.
        rootfs, image_digest = prepare_image(image, options) if image else (None, None)
        # The provider key's file is the verifier's secret too: proven absent from the sandbox like --key.
        key_file = (Path(setup.entry.api_key_file),) if setup is not None and setup.entry.api_key_file else ()
        proof = prove((*secrets, *key_file), rom_dir / "rom", runtime, rootfs, setup)
        proof["imageDigest"] = image_digest
        yield RomSolver(rom_dir / "rom", runtime, proof, rootfs=rootfs, model=setup)
    finally:
        shutil.rmtree(rom_dir, ignore_errors=True)


@contextlib.contextmanager
def routed_solver(req: AttestRequest, cart: LoadedCartridge, bench_meta: dict[str, Any],
                  tasks: Sequence[dict[str, Any]], store: Store, setup: ModelSetup | None = None
                  ) -> Iterator[Solver]:
    """The ROM solver for ``tasks``: one image (the benchmark's, or none) as before; with per-task images, every
    image the tasks need prepared and proven before any game, and each game routed to its own image's solver."""
    if not has_task_images(tasks):
        with rom_solver(req, cart, benchmark_image(bench_meta), store, setup) as solver:
            yield solver
        return
    images = draw_images(tasks, bench_meta)
    if req.sandbox.executor is not None:  # refused before any attempt for the draw; a held-in suite is refused here
        raise UsageError("attest: per-exam environment images play on local games only; drop --executor")
    if len(images) > MAX_IMAGES:  # refused before any attempt for the draw; a held-in suite is bounded here
        raise UsageError(f"attest: the tasks need {len(images)} distinct environment images; at most {MAX_IMAGES}")
    with contextlib.ExitStack() as stack:
        solvers: dict[str | None, Solver] = {
            image: stack.enter_context(rom_solver(req, cart, image, store, setup))
            for image in images}
        yield RoutingSolver(solvers, lambda task: task_image(task, bench_meta))


def _held_in(req: AttestRequest, loaded: Loaded, unsealed: bm.Unsealed, baseline: regr.Baseline,
             solver: Solver, stack: contextlib.ExitStack[Any], new_out: engine.Result
             ) -> tuple[tuple[str, ...], dict[str, Any]]:
    """Both ROMs on the held-in suite with the same kind of solver; the ROM's acceptIf gives the verdict."""
    cart = loaded.cart
    suite = regr.held_in_suite(baseline, unsealed)
    if req.solver is None and has_task_images(suite[3]):  # the held-in tasks' own images, proven like the draw's
        solver = stack.enter_context(routed_solver(req, cart, unsealed.bench.meta, suite[3], loaded.cart_store,
                                                   loaded.setup))
    base_solver = loaded.baseline_solver if req.solver is not None else \
        stack.enter_context(routed_solver(req, baseline.cart, unsealed.bench.meta, suite[3], baseline.store,
                                          models_mod.setup_for(req.models.models, runtime_of(baseline.cart.rom),
                                                               req.sandbox.executor)))
    assert base_solver is not None and baseline.held_out_rating is not None
    jobs = req.sandbox.jobs
    new_in = regr.held_in_rating(cart.rom_digest, suite, solver, jobs)
    base_in = regr.held_in_rating(baseline.cart.rom_digest, suite, base_solver, jobs)
    new = {"heldIn": new_in, "heldOut": ai.SuiteRating(new_out.rating.mu, new_out.rating.sigma)}
    base = {"heldIn": base_in, "heldOut": baseline.held_out_rating}
    labels = {"heldIn": suite[0], "heldOut": f"{unsealed.bench.id}@{unsealed.bench.version}"}
    regressed = regr.judge(baseline.spec, new, base, req.baseline.tolerance, labels)
    return tuple(regressed), {"acx:heldInR": new_in.r,
                              "acx:baseline": regr.credential_field(baseline, base_in.r, suite[0])}


def play(req: AttestRequest, loaded: Loaded, plan: Plan) -> Played:
    """Play the draw (the ROM in its proven sandbox, or the simulation); with a baseline, the held-in pair."""
    progress, total = req.progress, plan.total
    if progress:
        progress(0, total, "starting")

    def on_game(game: engine.Game, rating: Any) -> None:
        if progress:
            progress(game.number, total, f"{game.outcome}  mu={rating.mu:.2f} sigma={rating.sigma:.2f}")

    unsealed, baseline = plan.unsealed, plan.baseline
    bench = unsealed.bench
    with contextlib.ExitStack() as stack:
        solver = req.solver if req.solver is not None else stack.enter_context(
            routed_solver(req, loaded.cart, bench.meta, plan.eligible, loaded.cart_store, loaded.setup))
        result = engine.run(rom_digest=loaded.cart.rom_digest, benchmark_digest=bench.digest,
                            held_out=list(plan.eligible), commitment_key=unsealed.commitment_key, solver=solver,
                            params=plan.params, jobs=req.sandbox.jobs, on_game=on_game)
        if baseline is None:
            return Played(result)
        regressed, held_in = _held_in(req, loaded, unsealed, baseline, solver, stack, result)
        return Played(result, regressed, held_in)


def judge(req: AttestRequest, played: Played) -> IssueDecision:
    """The engine's gate, then regression and replay: any reason at all and nothing is issued."""
    result = played.result
    replay, regressed = tx.judge(req.models.replay, result, list(played.regressed))  # a diverged replay: no issue
    status = ISSUED if result.issued and not regressed else NOT_ISSUED
    return IssueDecision(played, status, (*regressed, *result.reasons), replay)
