"""``acx-oci attest``: re-run a cartridge on a sealed held-out slice and issue a level credential."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from acx_oci.cli.attest_opts import AttestFlags, OutputFlags, VerifierFlags, attest_flags
from acx_oci.cli.common import emit_json, json_option, registry_options
from acx_oci.cli.executor_opts import emit_event, executor_options, local_snapshot, progress_text
from acx_oci.cli.log_opts import producer_log_options
from acx_oci.cli.main import main
from acx_oci.cli.progress import ProgressDisplay
from acx_oci.errors import UsageError
from acx_oci.oci import StoreOptions
from acx_oci.rating import Solver
from acx_oci.services.verifier import (
    DEFAULT_TOLERANCE,
    AttestOutcome,
    AttestRequest,
    BaselineOptions,
    GateOptions,
    Issued,
    Logged,
    LogOptions,
    ModelOptions,
    ModelReplayExport,
    ModelReplayReport,
    NotIssued,
    Refused,
    RegistryOptions,
    SandboxOptions,
    load_export,
    load_models,
    new_run_dir,
    run_issuer,
)
from acx_oci.services.verifier.attest import attest
from acx_oci.solvers import ReferenceSolver
from acx_oci.timeutil import parse_duration
from acx_oci.trust import DEFAULT_MIN_GAMES, DEFAULT_SIGMA_MAX, load_identity


def _solver(kind: str | None, competence: float | None) -> Solver | None:
    """None is the ROM solver (the default); ``reference`` with ``--competence`` is a simulation."""
    if kind is None:
        kind = "reference" if competence is not None else "rom"
    if kind == "reference":
        if competence is None:
            raise UsageError("--solver reference needs --competence N (the simulated agent's skill)")
        return ReferenceSolver(competence)
    if competence is not None:
        raise UsageError("--competence is only for --solver reference (the ROM solver runs the ROM itself)")
    return None


def _model_replay_params(replay: ModelReplayExport, games: int | None, sigma_max: float, min_games: int
                   ) -> tuple[int, float, int]:
    """A replay plays the original run's --games, --sigma-max and --min-games: given ones must agree."""
    ctx = click.get_current_context()
    for (name, flag), value, original in zip((("games", "--games"), ("sigma_max", "--sigma-max"),
                                              ("min_games", "--min-games")), (games, sigma_max, min_games),
                                             replay.params, strict=True):
        if ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT) and value != original:
            raise UsageError(f"attest --model-replay: {flag} {value} differs from the original run's {original}; a "
                             f"replay plays the original run's parameters (leave {flag} out)")
    return replay.params


def _render_model_replay(report: ModelReplayReport) -> None:
    if report.reproduced:
        click.echo(f"  replay: every game reproduced the original outcome ({len(report.games)} games; mu, sigma and "
                   f"level as the original run's, which was {report.original['status']})")
        return
    if report.differs:
        click.echo(f"  replay: game(s) {', '.join(map(str, report.differs))} did not reproduce the original outcome")
    for g in report.games:
        if not g["reproduced"]:
            detail = f": {g['detail']}" if g.get("detail") else ""
            click.echo(f"    game {g['game']}: {g['outcome'] or 'not played'} (original: "
                       f"{g['originalOutcome'] or 'not played'}){detail}")
    if report.altered:
        click.echo(f"  replay: the recording of game(s) {', '.join(map(str, sorted(report.altered)))} is not the one "
                   "the original verifier signed for")
    if not report.same_rating:
        o = {k: f"{v:.3f}" if isinstance(v, float) else v for k, v in report.original.items()}
        click.echo(f"  replay: the original run had mu={o['mu']} sigma={o['sigma']} acxLevel={o['acxLevel']}")


def _render(outcome: AttestOutcome) -> None:
    r = outcome.result if not isinstance(outcome, Refused) else None
    if isinstance(outcome, Refused):
        click.echo("REFUSED (nothing was run)")
    elif r is not None:
        verdict = "ISSUED" if isinstance(outcome, Issued) else "NOT ISSUED"
        click.echo(f"{verdict}  mu={r.rating.mu:.3f} sigma={r.rating.sigma:.3f} games={r.rated} "
                   f"passRate={r.pass_rate:.0%} R={r.conservative:.2f} => acxLevel={r.level} tier={r.tier}")
        counts = {k: v for k, v in r.outcome_counts().items() if v}
        click.echo("  outcomes: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    else:  # refused by the plan before any game (too few exams for the gate): still a verdict, say it first
        click.echo("NOT ISSUED (no game was played)")
    if not isinstance(outcome, Refused) and outcome.replay is not None:
        _render_model_replay(outcome.replay)
    for reason in outcome.reasons:
        click.echo(f"  reason: {reason}")
    if not isinstance(outcome, Refused) and outcome.publication_error:
        click.echo(f"  NOT PUBLISHED: {outcome.publication_error}")
    if isinstance(outcome, NotIssued) and outcome.published:
        click.echo(f"  attempt record: {outcome.published.attestation_digest} (of {outcome.manifest_digest})")
    click.echo(f"  ROM digest: {outcome.rom_digest}")
    if isinstance(outcome, Issued):
        click.echo(f"  credential:  {outcome.credential_path}")
        click.echo(f"  status list: {outcome.status_list_path}")
        if outcome.attestation_digest:
            click.echo(f"  attestation: {outcome.attestation_digest} (referrer of {outcome.manifest_digest})")
            click.echo(f"  status list: {outcome.status_list_ref}")
    if not isinstance(outcome, Refused) and outcome.logged is not None:
        render_logged(outcome.logged)
    files = outcome.files if not isinstance(outcome, Refused) else None
    if files is not None:
        look = " kept here: a look pushes nothing" if isinstance(outcome, NotIssued) and outcome.look else ""
        click.echo(f"  result:      {files.result_path} ({len(files.record_paths)} signed game records{look})")


def render_logged(logged: Logged) -> None:
    """The log lines of a command's output: where the entry is, who cosigned, who did not, what failed."""
    where = f"entry {logged.proof.index}, " if logged.proof is not None else ""
    state = "published to" if logged.published else "NOT yet published to"
    click.echo(f"  log: {where}checkpoint size {logged.size}, {state} {logged.repository}")
    click.echo(f"    log key: {logged.key}")
    for url in logged.cosigned:
        click.echo(f"    cosigned by {url}")
    for refusal in logged.refused:
        click.echo(f"    witness did not cosign: {refusal}")
    if logged.error:
        click.echo(f"    log publication failed: {logged.error}")


def _certifiers(dids: tuple[str, ...]) -> tuple[str, ...]:
    """``--certifier`` values, each a DID (a typo would silently trust nobody)."""
    for did in dids:
        if not did.startswith("did:") or did.count(":") < 2:
            raise UsageError(f"--certifier: expected a DID (did:key:... or did:web:...), found {did!r}")
    return dids


def _empty_out_dir(out_dir: Path | None, state_dir: Path, as_json: bool) -> Path:
    """The run's output folder: given and empty, or a fresh one under STATE/runs/ (said on stderr)."""
    if out_dir is None:
        out_dir = new_run_dir(state_dir)
        if not as_json:
            click.echo(f"output: {out_dir}", err=True)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise UsageError(f"attest: output directory {out_dir} exists and is not empty")
    return out_dir


def _solvers(kind: str | None, competence: float | None, model_replay: Path | None,
             baseline_competence: float | None) -> tuple[Solver | None, Solver | None]:
    """The run's solver and the baseline's (simulations only); flags that cannot go together are refused."""
    solver = _solver(kind, competence)
    if model_replay is not None and solver is not None:
        raise UsageError("attest --model-replay replays the ROM solver's games: no --solver reference/--competence")
    if baseline_competence is not None and solver is None:
        raise UsageError("--baseline-competence is only for --solver reference")
    return solver, ReferenceSolver(baseline_competence) if baseline_competence is not None else None


def _progress(events: bool, executor: Any, jobs: int, as_json: bool
              ) -> tuple[ProgressDisplay, Callable[[int, int, str], None] | None]:
    """The progress line on a terminal and/or --json-events on stdout; None when neither is wanted."""
    show_progress = not as_json and sys.stderr.isatty()
    display = ProgressDisplay()

    def on_cluster(snap: dict[str, Any]) -> None:
        if events:
            emit_event(snap)
        display.cluster = progress_text(snap)

    def progress(done: int, total: int, text: str) -> None:
        if events and executor is None and not text.startswith("uploaded"):
            emit_event(local_snapshot(done, total, jobs or 1))
        if show_progress:
            display(done, total, text)

    if executor is not None:
        executor.on_progress = on_cluster
    return display, progress if show_progress or events else None


@main.command("attest")
@click.argument("cartridge_ref", required=False)
@click.option("--benchmark", "benchmark_ref", metavar="BENCH_REF", help="The benchmark artifact (required).")
@click.option("--key", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The verifier's key (PREFIX.key): unseals the slice, signs records and the credential.")
@click.option("--issuer", metavar="DID",
              help="The verifier's DID, must differ from the cartridge's (required; with --publish: the run's).")
@click.option("--solver", "solver_kind", type=click.Choice(["rom", "reference"]),
              help="rom (default): run the ROM's own signed runtime in a bubblewrap sandbox whose containment is "
                   "proven on this run; reference: a deterministic simulation (its credentials say so).")
@click.option("--competence", type=float, help="Reference solver: the simulated agent's skill (e.g. 33).")
@click.option("--jobs", type=click.IntRange(min=1, max=256),
              help="Games played at once (ratings are computed afterwards in draw order: same result for any N). "
                   "Default: the CPUs here, or with --executor dask the cluster's worker threads.")
@click.option("--games", type=int, help="Games to play (default min(90, held-out size)).")
@click.option("--sigma-max", type=click.FloatRange(min=0, min_open=True), default=DEFAULT_SIGMA_MAX, show_default=True,
              help="The gate: issue only if sigma is below this. It may be tightened; above 1.5 (the floor) the "
                   "run is a look: played and shown; no credential, no attempt counted, nothing pushed (below_floor).")
@click.option("--min-games", type=click.IntRange(min=1), default=DEFAULT_MIN_GAMES, show_default=True,
              help="The gate: issue only after at least this many rated games. Below 30 (the floor): a look, "
                   "as for --sigma-max.")
@click.option("--state", "state_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path.home() / ".acx-oci" / "verifier", show_default=True,
              help="Verifier state: the SQLite ledger of attempts, cooldowns and status lists.")
@click.option("--cooldown", default="24h", show_default=True, metavar="DURATION",
              help="Minimum time between attempts on one ROM and benchmark, and on one cartridge's claim to the "
                   "benchmark's capability across ROMs (e.g. 12h, 7d; 0 disables).")
@click.option("--cooldown-scope", type=click.Choice(["rom+claim", "rom", "publisher"]), default="rom+claim",
              show_default=True,
              help="rom: the cooldown applies per ROM digest only (a respin may try at once); publisher: also to "
                   "every cartridge id signed by the same publisher key on this capability and benchmark (a new "
                   "cartridge id buys no new try); recorded in the credential as acx:cooldownScope.")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Output directory: credential.json, status-list.json, games/, transcripts/, result.json "
                   "(default: a new run folder under STATE/runs/, printed).")
@click.option("--publish", "publish_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              metavar="OUT_DIR",
              help="Push an already signed result again (OUT_DIR: the run's -o folder or STATE/runs/RUN; its "
                   "credential, or a NOT ISSUED run's attempt record): re-verified against the cartridge, "
                   "idempotent (same result, same referrer digest), any number of times; no games.")
@click.option("--to", "publish_to", metavar="REPO",
              help="With --publish: push to this repository (another registry) instead of the run's; it must hold "
                   "the same cartridge manifest.")
@click.option("--no-push", is_flag=True,
              help="Only write files: don't publish the status list, the attestation or the attempt record.")
@click.option("--baseline", "baseline_ref", metavar="CART_REF",
              help="Regression acceptance: an earlier version of the same cartridge (reference, or a sha256: "
                   "manifest digest in this cartridge's repository) with a credential on this benchmark from this "
                   "issuer. Default: the ROM's policy.verification.regression.baseline, else the previous version "
                   "this verifier's ledger has a level for (none for a first version).")
@click.option("--baseline-competence", type=float,
              help="Reference solver: the baseline's simulated skill (required with --baseline; a baseline the "
                   "ledger finds replays at the skill its run recorded, unless this is given).")
@click.option("--regression-tolerance", type=click.FloatRange(min=0), default=DEFAULT_TOLERANCE, show_default=True,
              help="With --baseline: what a ROM's acceptIf reads as 'tolerance' (levels of R). The default rule "
                   "(no-regression) reads none: NOT ISSUED regression when the new version is worse with "
                   "probability >= 0.9 on either suite, from both ratings' mu and sigma (docs/performance.md).")
@click.option("--certifier", "certifiers", metavar="DID", multiple=True,
              help="An exam certifier to trust besides this verifier's own key (repeatable, in order of "
                   "preference). A certified benchmark's certification referrers by anyone else are ignored.")
@click.option("--models", "models_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The verifier's models file (YAML/JSON): for a ROM whose runtime.network is 'model', where "
                   "its model lives (baseUrl), which key pays (apiKeyEnv or apiKeyFile; never seen by the agent), "
                   "its trainingCutoff and per-game budgets. Without an entry: NOT ISSUED model_unavailable.")
@click.option("--model-replay", "model_replay", type=click.Path(exists=True, file_okay=False, path_type=Path),
              metavar="DIR",
              help="Audit a run of a model-calling ROM: DIR is what `acx-oci transcripts export` re-sealed to this "
                   "--key. Plays the same draw with each game's model proxy answering from that game's recording "
                   "and never calling upstream (no key needed; --models optional, but must agree); cutoff, budgets, "
                   "--games, --sigma-max and --min-games are the original's. A request the recording lacks gets "
                   "409 and makes its game lane-error replay_divergent. Everything reproduced: exits as the original "
                   "run did (0 issued, 1 not issued); otherwise NOT ISSUED replay_divergent (or recording_altered), "
                   "exit 1; an export of another ROM or benchmark: refused, exit 2.")
@executor_options
@producer_log_options
@registry_options(deadline=0)
@json_option
@attest_flags
def attest_command(cartridge_ref: str | None, benchmark_ref: str | None, flags: AttestFlags) -> None:
    """Independently re-run CARTRIDGE_REF on the sealed held-out slice of BENCH_REF.

    Pulls both by digest, requires an intact ROM signature and an issuer
    independent of the cartridge, draws the held-out tasks in the order fixed
    by the ROM digest, rates every game with TrueSkill and issues a signed
    level credential only if sigma < 1.5 over >= 30 games (looser: a look).

    The ROM solver (default) runs the ROM's own runtime.command for every
    task inside bubblewrap (no network, unprivileged, read-only /rom, a fresh
    /workspace) and grades in a separate sandbox. Containment is proven first
    by probes in the very same sandbox; unproven -> every game withheld,
    NOT ISSUED containment_unproven. `acx-oci sandbox check` runs the probes
    alone.

    With a baseline (--baseline, the ROM's policy, else the previous version
    this verifier's ledger has a level for) both ROMs also play the public
    slice: a drop the ROM's acceptIf refuses -> NOT ISSUED regression.

    With --model-replay DIR an auditor (a second verifier the benchmark was
    also sealed to) replays a model-calling run from the transcripts the first
    verifier exported to it: same ROM and benchmark (else refused), same draw,
    the model answered from the recording (zero upstream requests). It reports
    per game whether the outcome reproduced (--json: replay.games and
    replayDiffers, the games whose outcome differs). If everything reproduced
    it exits as the original run did and an issued credential says
    acx:modelReplay; if not, NOT ISSUED replay_divergent, exit 1.

    An attempt counts once its first game is played (Ctrl-C before it: no
    attempt): its signed result is sealed in the ledger before any push, and
    a failed (or vetoed) push frees no cooldown; `attest --publish OUT_DIR`
    pushes it later. A NOT ISSUED run is pushed as an attempt record.

    \b
    Exit codes: 0 issued, 1 not issued (or --publish: the folder does not
    verify), 2 refused before running (cooldown, bad input), 3 registry
    failure (the attempt counts; --publish retries the push).

    \b
    Example:
      acx-oci attest registry.example/acme/py-agent:1.0.0 --benchmark registry.example/acme/bench-py:2026.07.1 \\
          --key keys/verifier.key --issuer did:web:verifier.example.com --state ./state -o ./att
      acx-oci attest registry.example/acme/dag-agent:1.0.0 --benchmark registry.example/acme/bench:2026.07.1 \\
          --key keys/verifier.key --issuer did:web:verifier.example.com --competence 33 --state ./state -o ./sim
      acx-oci attest --publish ./att --key keys/verifier.key --state ./state
      acx-oci attest registry.example/acme/llm-agent:1.0.0 --benchmark registry.example/acme/bench-py:2026.07.1 \\
          --key keys/auditor.key --issuer did:web:auditor.example.com --state ./audit -o ./replay \\
          --model-replay ./export
    """
    verifier, play, gate, output = flags.verifier, flags.play, flags.gate, flags.output
    options = flags.registry.store_options()
    log = flags.log.resolve(verifier.state_dir, options)
    if output.publish_dir is not None:
        if cartridge_ref or benchmark_ref or output.out_dir:
            raise UsageError("attest --publish OUT_DIR takes no CARTRIDGE_REF, --benchmark or -o: the folder names "
                             "its cartridge")
        return _publish_command(output.publish_dir, verifier, options, output, log)
    if output.publish_to is not None:
        raise UsageError("attest --to REPO goes with --publish OUT_DIR")
    if not cartridge_ref or not benchmark_ref or not verifier.issuer:
        raise UsageError("attest: expected CARTRIDGE_REF, --benchmark BENCH_REF and --issuer DID "
                         "(or --publish OUT_DIR)")
    ident = load_identity(verifier.key, did=verifier.issuer)  # before -o is made: a missing key leaves nothing behind
    out_dir = _empty_out_dir(output.out_dir, verifier.state_dir, output.as_json)
    solver, baseline_solver = _solvers(play.solver_kind, play.competence, play.model_replay,
                                       flags.baseline.baseline_competence)
    seconds = parse_duration(gate.cooldown, "--cooldown") or 0.0
    replay = load_export(play.model_replay, ident) if play.model_replay is not None else None
    games, sigma_max, min_games = gate.games, gate.sigma_max, gate.min_games
    if replay is not None:
        games, sigma_max, min_games = _model_replay_params(replay, games, sigma_max, min_games)
    if solver is not None and flags.executor.executor != "local":
        raise UsageError("--executor: only the ROM solver plays on a cluster (a simulation is computed here)")
    executor = flags.executor.open(flags.registry.timeout) if solver is None else None
    jobs = play.jobs or (executor.threads() if executor is not None else os.cpu_count() or 1)
    display, progress = _progress(bool(flags.executor.json_events), executor, jobs, output.as_json)
    req = AttestRequest(
        cartridge_ref=cartridge_ref, benchmark_ref=benchmark_ref, verifier=ident, out_dir=out_dir,
        state_dir=verifier.state_dir, solver=solver,
        gate=GateOptions(games=games, sigma_max=sigma_max, min_games=min_games, cooldown=timedelta(seconds=seconds),
                         cooldown_scope=gate.cooldown_scope),
        sandbox=SandboxOptions(jobs=jobs, executor=executor, secret_paths=(verifier.key,)),
        baseline=BaselineOptions(ref=flags.baseline.baseline_ref, solver=baseline_solver,
                                 tolerance=flags.baseline.regression_tolerance),
        models=ModelOptions(models=load_models(play.models_path) if play.models_path is not None else None,
                            replay=replay),
        registry=RegistryOptions(store_options=options, push=not output.no_push, log=log),
        progress=progress, certifiers=_certifiers(verifier.certifiers))
    try:
        outcome = attest(req)
    finally:
        display.stop()
        if executor is not None:
            executor.close()
    if output.as_json:
        emit_json({**outcome.to_json(), "outDir": str(out_dir)})
    else:
        _render(outcome)
    sys.exit(outcome.exit_code)


def _publish_command(out_dir: Path, verifier: VerifierFlags, options: StoreOptions, output: OutputFlags,
                     log: LogOptions | None) -> None:
    from datetime import UTC, datetime

    from acx_oci.services.verifier import publish_folder

    issuer = verifier.issuer
    if issuer is None:  # the run's issuer, as result.json recorded it
        issuer = run_issuer(out_dir)
    ident = load_identity(verifier.key, did=issuer)
    progress = ProgressDisplay()
    try:
        published = publish_folder(out_dir, ident, verifier.state_dir, datetime.now(UTC), options,
                                   progress if not output.as_json and sys.stderr.isatty() else None,
                                   output.publish_to, log)
    finally:
        progress.stop()
    if output.as_json:
        emit_json(published.to_json())
        return
    click.echo(f"PUBLISHED {published.credential_id}")
    click.echo(f"  {published.kind}: {published.credential_digest}")
    click.echo(f"  referrer:    {published.attestation_digest} (of {published.cartridge_ref})")
    if published.status_list_ref:
        click.echo(f"  status list: {published.status_list_ref}")
