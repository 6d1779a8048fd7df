"""The command solver: runs an agent command on a task and grades the submitted tree.

:class:`CommandSolver` runs a real agent command in a fresh workspace with a
time limit and, where the kernel allows, no network (``unshare -n``, with a
PID namespace so nothing the agent started outlives it). It then grades a
*copy* of the submitted tree with the task's hidden pytest files, which live
in a directory the agent never saw, under flags that make pytest ignore any
``conftest.py``, ini file or cache the agent planted. If the graded tree no
longer hashes to what was submitted, the game is ``invalid``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acx_oci.crypto.digest import sha256_digest
from acx_oci.errors import UsageError
from acx_oci.evaluation.solver import SolverResult
from acx_oci.model.gamerecords import CERTIFIED_PASS, INVALID, LANE_ERROR, MODEL_FAIL
from acx_oci.sandbox.tree import tree_digest, write_files

DEFAULT_TIME_LIMIT = 60.0
DEFAULT_GRADER_TIME_LIMIT = 120.0
MAX_CAPTURE = 64 * 1024


# --- workspace hashing -----------------------------------------------------------------------------------


# --- command ---------------------------------------------------------------------------------------------


def probe_network_isolation() -> bool:
    """True when ``unshare -n -p -f`` runs here and the new namespace has no interface but ``lo``."""
    if shutil.which("unshare") is None:
        return False
    try:
        out = subprocess.run(["unshare", "-n", "-p", "-f", "--", "cat", "/proc/net/dev"], capture_output=True,
                             timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if out.returncode != 0:
        return False
    ifaces = [ln.split(":", 1)[0].strip() for ln in out.stdout.decode(errors="replace").splitlines()[2:] if ":" in ln]
    return ifaces == ["lo"]


@dataclass
class _Run:
    returncode: int | None
    timed_out: bool
    stdout: bytes
    stderr: bytes
    seconds: float
    spawn_error: str | None = None


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> _Run:
    """Run in its own session; on timeout kill the whole process group."""
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return _Run(None, False, b"", b"", 0.0, f"{type(exc).__name__}: {exc.strerror}")
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # leftovers in the group: end them too
            os.killpg(proc.pid, signal.SIGKILL)
    return _Run(proc.returncode, timed_out, out[-MAX_CAPTURE:], err[-MAX_CAPTURE:], time.monotonic() - t0)


def _junit_summary(path: Path) -> dict[str, int] | None:
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    if not suites:
        return None
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for s in suites:
        for k in total:
            try:
                total[k] += int(s.get(k, "0"))
            except ValueError:
                return None
    return total


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class CommandSolver:
    """Run ``agent_cmd`` (a shell command) per task, then grade with the hidden pytest files."""

    def __init__(self, agent_cmd: str, *, time_limit: float = DEFAULT_TIME_LIMIT,
                 grader_time_limit: float = DEFAULT_GRADER_TIME_LIMIT, isolate_network: bool = True,
                 python: str = sys.executable, tmp_root: Path | None = None) -> None:
        if not agent_cmd.strip():
            raise UsageError("command solver: --agent-cmd must not be empty")
        self.agent_cmd = agent_cmd
        self.time_limit = time_limit
        self.grader_time_limit = grader_time_limit
        self.python = python
        self.tmp_root = tmp_root
        self.network_isolated = isolate_network and probe_network_isolation()

    def descriptor(self) -> dict[str, Any]:
        return {
            "name": "command",
            "version": 1,
            "agentCommandDigest": sha256_digest(self.agent_cmd.encode("utf-8")),
            "defaultTimeLimitSeconds": self.time_limit,
            "networkIsolation": "unshare-net+pid" if self.network_isolated else "none",
            "networkIsolationEnforced": self.network_isolated,
            "grader": "pytest, hidden files outside the workspace, --noconftest -c /dev/null -p no:cacheprovider",
        }

    def record_fields(self) -> dict[str, Any]:
        return {}

    def _wrap(self, argv: list[str]) -> list[str]:
        return ["unshare", "-n", "-p", "-f", "--", *argv] if self.network_isolated else argv

    def solve(self, task: dict[str, Any], rom_digest: str) -> SolverResult:
        grader = task.get("grader") or {}
        if grader.get("kind") != "pytest":
            return SolverResult(LANE_ERROR, f"command solver cannot grade a {grader.get('kind')!r} task")
        root = Path(tempfile.mkdtemp(prefix="acx-task-", dir=self.tmp_root))
        groot = Path(tempfile.mkdtemp(prefix="acx-grade-", dir=self.tmp_root))
        try:
            return self._solve(task, rom_digest, root, groot)
        except OSError as exc:
            return SolverResult(LANE_ERROR, f"harness I/O error: {type(exc).__name__}: {exc.strerror}")
        finally:
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(groot, ignore_errors=True)

    def _solve(self, task: dict[str, Any], rom_digest: str, root: Path, groot: Path) -> SolverResult:
        grader = task["grader"]
        ws, taskdir, home = root / "workspace", root / "task", root / "home"
        for d in (ws, taskdir, home):
            d.mkdir()
        write_files(ws, (task.get("workspace") or {}).get("files") or {})
        (taskdir / "PROMPT.md").write_text(str(task.get("prompt", "")), "utf-8")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
               "ACX_WORKSPACE": str(ws), "ACX_PROMPT_FILE": str(taskdir / "PROMPT.md"),
               "ACX_ROM_DIGEST": rom_digest, "PYTHONDONTWRITEBYTECODE": "1"}
        limit = float(task.get("timeLimitSeconds") or self.time_limit)
        agent = _run(self._wrap(["/bin/sh", "-c", self.agent_cmd]), ws, env, limit)
        transcript: dict[str, Any] = {
            "taskId": task["id"], "romDigest": rom_digest, "networkIsolated": self.network_isolated,
            "agent": {"exitCode": agent.returncode, "timedOut": agent.timed_out, "seconds": round(agent.seconds, 3),
                      "stdout": _text(agent.stdout), "stderr": _text(agent.stderr), "spawnError": agent.spawn_error},
        }

        def done(outcome: str, detail: str, **facts: Any) -> SolverResult:
            transcript["outcome"], transcript["detail"] = outcome, detail
            return SolverResult(outcome, detail, json.dumps(transcript, sort_keys=True).encode("utf-8"), facts)

        if agent.spawn_error is not None or (agent.returncode in (126, 127) and not agent.timed_out):
            return done(LANE_ERROR, f"agent command could not start ({agent.spawn_error or agent.returncode})")
        if agent.timed_out:
            # A real result, not a lane error: otherwise hanging on hard tasks would keep them unrated.
            return done(MODEL_FAIL, f"agent exceeded the {limit:g}s time limit")
        submitted = tree_digest(ws)
        transcript["workspaceDigest"] = submitted
        # Grade a copy: whatever the agent left running, or the solution does at grade time, cannot touch
        # the submitted tree, and any change to the copy is caught by the hash check below.
        sub, hidden, ghome = groot / "submission", groot / "grader", groot / "home"
        shutil.copytree(ws, sub, symlinks=True)
        hidden.mkdir()
        ghome.mkdir()
        write_files(hidden, grader["files"])
        report = groot / "report.xml"
        genv = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(ghome), "LANG": "C.UTF-8",
                "ACX_SUBMISSION": str(sub), "ACX_PYTHON": self.python, "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONNOUSERSITE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        argv = [self.python, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest", "-c", "/dev/null",
                "--rootdir", str(hidden), f"--junitxml={report}", "-o", "junit_family=xunit2", str(hidden)]
        graded = _run(self._wrap(argv), hidden, genv, float(grader.get("timeLimitSeconds") or self.grader_time_limit))
        summary = _junit_summary(report)
        graded_digest = tree_digest(sub)
        transcript["grader"] = {"exitCode": graded.returncode, "timedOut": graded.timed_out,
                                "stdout": _text(graded.stdout), "stderr": _text(graded.stderr), "report": summary}
        transcript["gradedDigest"] = graded_digest
        facts = {"workspaceDigest": submitted, "gradedDigest": graded_digest, "agentExit": agent.returncode,
                 "agentTimedOut": agent.timed_out}
        if graded_digest != submitted:
            return done(INVALID, "graded tree does not hash to the submitted workspace", **facts)
        if graded.timed_out or graded.spawn_error is not None:
            return done(LANE_ERROR, "grader timed out or could not start", **facts)
        expected = grader.get("expectedTests")
        if graded.returncode == 0:
            ok = (summary is not None and summary["failures"] == summary["errors"] == summary["skipped"] == 0
                  and summary["tests"] >= 1 and (expected is None or summary["tests"] == expected))
            if ok:
                return done(CERTIFIED_PASS, "hidden tests passed", **facts)
            return done(INVALID, "grader exited 0 but its report does not show every expected test passing", **facts)
        if graded.returncode == 1:
            if summary is not None and summary["failures"] + summary["errors"] > 0:
                return done(MODEL_FAIL, "hidden tests failed", **facts)
            return done(INVALID, "grader reported failure without a consistent report", **facts)
        return done(LANE_ERROR, f"grader broke (pytest exit {graded.returncode})", **facts)
