"""The ROM solver: the verifier runs the cartridge's own signed ROM, never a command it typed.

For each drawn task the ROM's ``runtime.command`` (signed, inside the ROM
digest) runs in a bubblewrap sandbox whose containment was proven on this run
with the same spec (:func:`acx_oci.sandbox.check`): ROM files read-only at
``/rom``, the task at ``/workspace``, the prompt at ``/task/PROMPT.md``, no
network, an unprivileged uid, rlimits and a wall-clock kill. The submitted
tree is then graded in a *separate* sandbox (:func:`acx_oci.sandbox.grade`):
Debian's pytest, hidden tests hidden from the submission, the submission as data.

Each game carries the reference design's run conditions, recorded separately:

* ``grader`` — the graded tree hashes to the submitted one (else ``model-fail``: only the agent's files differ);
* ``containment`` — the run's probe results (unproven: every game ``withheld``);
* ``provenance`` — ``romDigest``, ``runtimeDigest``, ``taskCommitment`` are in the record;
* ``integrity`` — a report inconsistent with pytest's exit code is ``model-fail``
  (the submission shares pytest's uid), a pass on a workspace the agent never
  changed (an *unsubmitted green*: the exam is broken) is ``invalid``; never a pass;
* ``harness`` — a grader that cannot start or times out is a ``lane-error``
  (the engine withholds the level when more than 10% of games end so).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from acx_oci import safetree
from acx_oci.egress import ModelSetup
from acx_oci.errors import AcxError, PathOutside, TreeRefused, UsageError
from acx_oci.model import LANE_ERROR, MODEL_FAIL, WITHHELD, runtime_digest, runtime_limits
from acx_oci.model import modelapi as ma
from acx_oci.rating import SolverResult, failure_text
from acx_oci.sandbox import (
    SandboxSpec,
    check,
    drops_privilege,
    game_outcome,
    give_to_sandbox,
    grade,
    own_uid,
    relay_argv,
    remove_tree,
    run,
    staging_dir,
    tree_digest,
    write_files,
)
from acx_oci.solvers.containment import check_game

DEFAULT_GRADER_SECONDS = 120.0
MAX_TRANSCRIPT_TEXT = 16 * 1024
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"


def model_env(model: ma.DeclaredModel) -> dict[str, str]:
    """What an agent that calls a model sees: SDK base URLs on the relay's loopback port and a placeholder
    key (the real one never enters the sandbox), plus the model it was declared for."""
    base = f"http://127.0.0.1:{ma.MODEL_PORT}"
    return {"OPENAI_BASE_URL": f"{base}/v1", "ANTHROPIC_BASE_URL": base, "OPENAI_API_KEY": ma.PLACEHOLDER_KEY,
            "ANTHROPIC_API_KEY": ma.PLACEHOLDER_KEY, "ACX_MODEL_ID": model.id, "ACX_MODEL_API": model.api,
            "NO_PROXY": "127.0.0.1,localhost"}


def game_spec(rom_dir: Path, runtime: dict[str, Any], *, rootfs: Path | None = None,
              workspace: Path | None = None, task_dir: Path | None = None,
              model_socket: Path | None = None) -> SandboxSpec:
    """The one sandbox spec every game of a run uses (and the containment probes run in: see :func:`prove`,
    which binds an empty placeholder workspace and task directory where the games bind theirs). A ROM
    whose network is ``model`` gets the game's proxy socket bound in and nothing more: the network
    namespace stays empty."""
    limits = runtime_limits(runtime)
    declared = ma.declared_model(runtime)
    env = {"PATH": SANDBOX_PATH, "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
           **{str(k): str(v) for k, v in (runtime.get("env") or {}).items()},
           **(model_env(declared) if declared else {}),
           "ACX_ROM": "/rom", "ACX_WORKSPACE": "/workspace", "ACX_PROMPT_FILE": "/task/PROMPT.md"}
    ro: list[tuple[Path, str]] = [(rom_dir, "/rom")]
    if task_dir is not None:
        ro.append((task_dir, "/task"))
    rw: tuple[tuple[Path, str], ...] = ((workspace, "/workspace"),) if workspace is not None else ()
    if declared is not None and model_socket is not None:
        rw += ((model_socket, ma.SOCKET_INSIDE),)
    return SandboxSpec(rootfs=rootfs, ro_binds=tuple(ro), rw_binds=rw, env=env,
                       chdir="/workspace" if workspace is not None else "/",
                       time_seconds=float(limits["timeSeconds"]), memory_mib=int(limits["memoryMiB"]),
                       pids=int(limits["pids"]), disk_mib=int(limits["diskMiB"]),
                       file_size_mib=min(int(limits["diskMiB"]), 1024))


def grader_spec(rootfs: Path | None, seconds: float = DEFAULT_GRADER_SECONDS) -> SandboxSpec:
    """The grading sandbox's limits: the verifier's, never the ROM's (the probes run in it too)."""
    return SandboxSpec(rootfs=rootfs, time_seconds=seconds, memory_mib=2048, pids=256)


def prove_game(secrets: tuple[Path, ...], rom_dir: Path, runtime: dict[str, Any], rootfs: Path | None = None,
               model: ModelSetup | None = None) -> dict[str, Any]:
    """The probes in the games' exact spec: a placeholder workspace and task directory bound where the games
    bind theirs and, for a ROM that calls a model, a proxy socket bound exactly as a game's (a real proxy
    serves it while the probes run, in front of a stand-in upstream: :mod:`acx_oci.solvers.containment`)."""
    declared = ma.declared_model(runtime)
    if declared is not None and model is None:
        raise UsageError("this ROM calls a model: proving its containment needs the verifier's models file")
    if declared is not None and model is not None and declared != model.declared:
        raise UsageError(f"the models entry {model.entry.api}:{model.entry.id} is not the ROM's declared model "
                         f"{declared.api}:{declared.id}")
    stage = staging_dir("acx-probe-binds-")
    try:
        ws, task = stage / "workspace", stage / "task"
        ws.mkdir(mode=0o755)
        task.mkdir(mode=0o755)
        with own_uid(game_spec(rom_dir, runtime, rootfs=rootfs, workspace=ws, task_dir=task,
                               model_socket=stage / "model.sock" if declared is not None else None),
                     binds_given_after=True) as spec:
            give_to_sandbox(ws, spec)
            return check_game(secrets, spec, model if declared is not None else None)
    finally:
        remove_tree(stage)


def prove(secrets: tuple[Path, ...], rom_dir: Path, runtime: dict[str, Any], rootfs: Path | None = None,
          model: ModelSetup | None = None) -> dict[str, Any]:
    """Containment proof for a run: :func:`prove_game` (model egress included when the ROM calls a model)
    and the probes in the grader's spec; proven only if both are."""
    game = prove_game(secrets, rom_dir, runtime, rootfs, model)
    grading = check(secrets, grader_spec(rootfs))
    probes = [*game.get("probes", []), *({**p, "name": f"grader sandbox: {p['name']}"}
                                          for p in grading.get("probes", []))]
    proof = {**game, "probes": probes, "proven": bool(game.get("proven")) and bool(grading.get("proven"))}
    if grading.get("error") and not game.get("error"):
        proof["error"] = f"grader sandbox: {grading['error']}"
    return proof


def rom_descriptor(runtime: dict[str, Any], sandbox_version: str | None) -> dict[str, Any]:
    """The ``solver`` every record of a ROM run names: the same wherever the games are played."""
    declared = ma.declared_model(runtime)
    egress = {"network": "model", "egress": f"verifier proxy via {ma.SOCKET_INSIDE} (empty network namespace)"} \
        if declared else {"network": "none"}
    return {"name": "rom", "version": 1, "runtimeDigest": runtime_digest(runtime),
            "sandbox": {"name": "bubblewrap", "version": sandbox_version,
                        **egress, "limits": runtime_limits(runtime)},
            "grader": "separate sandbox, /usr/bin/python3 -I -m pytest, hidden tests on stdin and deleted "
                      "after collection (pytest non-dumpable), "
                      "submission as data (--noconftest, -c /grader/pytest.ini, plugin autoload off)"}


def _text(data: bytes) -> str:
    return data[:MAX_TRANSCRIPT_TEXT].decode("utf-8", "replace")


def materialize_rom(files: dict[str, bytes], into: Path) -> Path:
    """Write the (already digest-verified) ROM files read-only under ``into``; directories 0755, files 0444."""
    into.mkdir(mode=0o755, parents=True, exist_ok=True)
    into.chmod(0o755)
    for rel, data in sorted(files.items()):
        try:  # through descriptors: no name of the ROM can place a file outside ``into``
            safetree.write_inside(into, rel, data, 0o555 if rel.endswith((".sh", ".py")) else 0o444)
        except PathOutside as exc:
            raise AcxError(f"ROM file {rel!r} leaves the ROM directory ({exc})") from None
    return into


class RomSolver:
    """Plays each task with the ROM's own runtime, in a sandbox proven on this run; grades in another."""

    def __init__(self, rom_dir: Path, runtime: dict[str, Any], containment: dict[str, Any], *,
                 rootfs: Path | None = None, grader_seconds: float = DEFAULT_GRADER_SECONDS,
                 model: ModelSetup | None = None) -> None:
        if ma.declared_model(runtime) is not None and model is None:
            raise UsageError("this ROM calls a model: the run needs the verifier's models file (--models)")
        self.model = model
        self.rom_dir = rom_dir
        self.runtime = runtime
        self.runtime_digest = runtime_digest(runtime)
        self.containment = containment
        self.rootfs = rootfs
        self.grader_seconds = grader_seconds

    def descriptor(self) -> dict[str, Any]:
        """The runtime and the local sandbox version, as every game record names the solver."""
        return rom_descriptor(self.runtime, self.containment.get("version"))

    def record_fields(self) -> dict[str, Any]:
        """What every game record of this run carries besides the outcome."""
        return {"runtimeDigest": self.runtime_digest, "containment": self.containment}

    def solve(self, task: dict[str, Any], rom_digest: str) -> SolverResult:
        """Play one task in the sandbox: withheld unless containment is proven, a lane error for a non-pytest grader."""
        if not self.containment.get("proven"):
            failed = [p["name"] for p in self.containment.get("probes") or [] if not p.get("ok")]
            why = ", ".join(failed) or str(self.containment.get("error") or "no proof")
            return SolverResult(WITHHELD, f"containment unproven ({why})",
                                facts={"conditions": {"containment": False}})
        grader = task.get("grader") or {}
        if grader.get("kind") != "pytest":
            return SolverResult(LANE_ERROR, f"the rom solver cannot grade a {grader.get('kind')!r} task")
        root = staging_dir("acx-game-")
        try:
            with contextlib.ExitStack() as scope:  # the game's own host uid, for its run, proxy and grade
                return self._play(task, rom_digest, root, scope)
        except (OSError, AcxError) as exc:
            return SolverResult(LANE_ERROR, f"harness error: {type(exc).__name__}")
        finally:
            remove_tree(root)

    def _play(self, task: dict[str, Any], rom_digest: str, root: Path, scope: contextlib.ExitStack) -> SolverResult:
        grader = task["grader"]
        ws, taskdir, hidden = root / "workspace", root / "task", root / "hidden"
        for d in (ws, taskdir, hidden):
            d.mkdir(mode=0o755)
        write_files(ws, (task.get("workspace") or {}).get("files") or {})
        start = tree_digest(ws)
        (taskdir / "PROMPT.md").write_text(str(task.get("prompt", "")), "utf-8")
        (taskdir / "PROMPT.md").chmod(0o444)
        for p in ws.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        sock = root / "model.sock"
        spec = scope.enter_context(own_uid(game_spec(self.rom_dir, self.runtime, rootfs=self.rootfs, workspace=ws,
                                                     task_dir=taskdir, model_socket=sock if self.model else None),
                                           binds_given_after=True))
        give_to_sandbox(ws, spec)
        limit = min(float(task.get("timeLimitSeconds") or spec.time_seconds), spec.time_seconds)
        argv = list(self.runtime["command"])
        proxy = self.model.proxy(sock, (spec.host_uid, spec.host_gid) if drops_privilege() else None,
                                 str(task["id"]), game_seconds=limit) if self.model else None
        try:
            agent = run(spec, relay_argv(argv) if proxy else argv, time_seconds=limit)
        finally:
            mrun = proxy.stop() if proxy else None
        transcript: dict[str, Any] = {
            "taskId": task["id"], "romDigest": rom_digest, "runtimeDigest": self.runtime_digest,
            "agent": {"exitCode": agent.returncode, "timedOut": agent.timed_out,
                      "seconds": round(agent.wall_seconds, 3), "stdout": _text(agent.stdout),
                      "stderr": _text(agent.stderr)},
        }
        conditions: dict[str, Any] = {"containment": True}
        extra: dict[str, Any] = {}
        if mrun is not None:
            transcript["model"] = mrun.transcript  # sealed with the game transcript: it holds held-out prompts
            extra["record"] = {"model": mrun.record}

        def done(outcome: str, detail: str, **facts: Any) -> SolverResult:
            transcript["outcome"], transcript["detail"] = outcome, detail
            return SolverResult(outcome, detail, json.dumps(transcript, sort_keys=True).encode("utf-8"),
                                {**facts, **extra, "conditions": conditions})

        if mrun is not None and (mrun.upstream_failed or mrun.divergent):
            # The examiner's side failed (the provider, or a replay whose recording lacks a request): never the
            # model's fail, and counted by the harness review's 10% rule.
            conditions.update(grader=None, integrity=None, harness=False)
            if mrun.divergent:
                return done(LANE_ERROR, "replay_divergent: the agent sent a request the recording does not hold")
            return done(LANE_ERROR, "upstream_failed: the model provider failed or did not answer in this game",
                        review={"lane": "upstream"})

        if agent.timed_out:
            # A real result: otherwise hanging on hard tasks would keep them unrated.
            conditions.update(grader=None, integrity=None, harness=True)
            return done(MODEL_FAIL, f"agent exceeded the {limit:g}s time limit", agentTimedOut=True,
                        review={"timedOut": True, "cpuSeconds": agent.cpu_seconds,
                                "runqueueSeconds": agent.runqueue_seconds, "limitSeconds": limit})
        try:
            submitted = tree_digest(ws)
        except TreeRefused as exc:
            # The agent's own doing (and never walked to the end): a fail, not a lane error it could choose.
            conditions.update(grader=None, integrity=None, harness=True)
            return done(MODEL_FAIL, f"submission not gradable: {exc}")
        transcript["workspaceDigest"] = submitted
        write_files(hidden, grader.get("files") or {})
        # The grader's limits and environment are the verifier's, never the ROM's (a ROM could otherwise
        # starve its grader into lane errors, or hand it variables).
        gseconds = float(grader.get("timeLimitSeconds") or self.grader_seconds)
        gspec = grader_spec(self.rootfs, gseconds)
        graded = grade(ws, hidden, spec=gspec, time_seconds=gseconds)
        transcript["grader"] = {"exitCode": graded.returncode, "timedOut": graded.timed_out,
                                "tampering": list(graded.tamper),
                                "reportConsistent": graded.report_ok, "counts": graded.counts(),
                                "failing": sorted(graded.failing()), "stdout": _text(graded.stdout)}
        facts = {"workspaceDigest": submitted, "gradedDigest": graded.graded_digest,
                 "agentExit": agent.returncode, **({"tampering": list(graded.tamper)} if graded.tamper else {})}
        extra["record"] = {**extra.get("record", {}), "grading": graded.how()}  # how the exam was graded
        judged = game_outcome(graded, submitted, start, grader.get("expectedTests"))
        conditions.update(judged.conditions)
        text = failure_text(graded.stdout) if judged.outcome == MODEL_FAIL else None
        return done(judged.outcome, judged.detail, **facts, **({"review": {"failureText": text}} if text else {}))


def new_rom_dir() -> Path:
    """A fresh directory the sandbox's unprivileged uid can read (mode 0755), to materialise a ROM into."""
    return staging_dir("acx-rom-")
