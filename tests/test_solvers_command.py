"""The command solver on the bench-py testdata: real passes and fails, and cheating does not pay."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acx_oci.sandbox.tree import tree_digest
from acx_oci.services import benchmark as bm
from acx_oci.solvers.command import CommandSolver, probe_network_isolation

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ROOT / "testdata" / "agents"
ROM = "sha256:" + "0" * 64
# add, is_even, is_palindrome (agent's near miss), fibonacci, topo (agent does not know it), rpn
SUBSET = ["py-0001", "py-0002", "py-0010", "py-0011", "py-0031", "py-0032"]


@pytest.fixture(scope="module")
def tasks() -> dict[str, dict[str, Any]]:
    bench, _ = bm.load_suite_dir(ROOT / "testdata" / "bench-py")
    return {t["id"]: t for t in bench.tasks}


def _agent(name: str) -> str:
    return f"{sys.executable} {AGENTS / name}"


def test_real_agent_passes_some_and_fails_others(tasks: dict[str, dict[str, Any]]) -> None:
    solver = CommandSolver(_agent("simple_agent.py"))
    outcomes = {tid: solver.solve(tasks[tid], ROM) for tid in SUBSET}
    got = {tid: r.outcome for tid, r in outcomes.items()}
    assert got == {"py-0001": "certified-pass", "py-0002": "certified-pass", "py-0010": "model-fail",
                   "py-0011": "certified-pass", "py-0031": "model-fail", "py-0032": "model-fail"}
    r = outcomes["py-0001"]
    assert r.facts["workspaceDigest"] == r.facts["gradedDigest"]
    transcript = json.loads(r.transcript or b"{}")
    assert transcript["agent"]["exitCode"] == 0 and "add" in transcript["agent"]["stdout"]
    n_tests = json.loads((ROOT / "testdata" / "bench-py" / "tasks" / "py-0001" / "task.json").read_text())
    assert transcript["grader"]["report"] == {"tests": n_tests["grader"]["expectedTests"], "failures": 0, "errors": 0,
                                              "skipped": 0}


def test_network_isolation_is_recorded_honestly(tasks: dict[str, dict[str, Any]]) -> None:
    solver = CommandSolver("cat /proc/net/dev > interfaces.txt")
    desc = solver.descriptor()
    assert desc["networkIsolationEnforced"] is probe_network_isolation()
    assert desc["networkIsolation"] == ("unshare-net+pid" if desc["networkIsolationEnforced"] else "none")
    assert CommandSolver("true", isolate_network=False).descriptor()["networkIsolationEnforced"] is False
    if not desc["networkIsolationEnforced"]:
        pytest.skip("unshare -n is not available here; isolation recorded as not enforced")
    r = solver.solve(tasks["py-0001"], ROM)
    assert r.outcome == "model-fail"  # wrote no solution
    # inside the agent's namespace, only loopback exists
    transcript = json.loads(r.transcript or b"{}")
    assert transcript["networkIsolated"] is True


def test_planted_hooks_and_edited_tests_do_not_pass(tasks: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    # First show that the attack is real: a naive grader running pytest in the workspace is fooled.
    ws = tmp_path / "workspace"
    for rel, content in tasks["py-0001"]["workspace"]["files"].items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(content)
    subprocess.run([sys.executable, str(AGENTS / "cheating_agent.py")], check=True,
                   env={**os.environ, "ACX_WORKSPACE": str(ws)}, capture_output=True)
    assert (ws / "conftest.py").exists()
    shutil.copy(ROOT / "testdata" / "bench-py" / "tasks" / "py-0001" / "hidden" / "test_hidden.py", ws)
    naive = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_hidden.py"], cwd=ws,
                           capture_output=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert naive.returncode == 0, "the planted conftest.py fools a naive grader"
    # Our grader is not fooled.
    solver = CommandSolver(_agent("cheating_agent.py"))
    for tid in ("py-0001", "py-0011"):
        r = solver.solve(tasks[tid], ROM)
        assert r.outcome == "model-fail", (tid, r.detail)


def test_grading_that_changes_the_tree_is_invalid(tasks: dict[str, dict[str, Any]]) -> None:
    r = CommandSolver(_agent("tamper_agent.py")).solve(tasks["py-0001"], ROM)
    assert r.outcome == "invalid" and "hash" in r.detail
    assert r.facts["workspaceDigest"] != r.facts["gradedDigest"]


def test_timeouts_and_harness_failures(tasks: dict[str, dict[str, Any]]) -> None:
    slow = CommandSolver("sleep 30", time_limit=1)
    task = {**tasks["py-0002"]}
    task.pop("timeLimitSeconds", None)
    r = slow.solve(task, ROM)
    assert r.outcome == "model-fail" and "time limit" in r.detail
    missing = CommandSolver("/nonexistent/agent-binary")
    assert missing.solve(tasks["py-0002"], ROM).outcome == "lane-error"
    broken = {**tasks["py-0002"], "grader": {**tasks["py-0002"]["grader"],
                                             "files": {"test_hidden.py": "import nonexistent_module_xyz\n"}}}
    assert CommandSolver("true").solve(broken, ROM).outcome == "lane-error"
    ref_task = {"id": "x", "difficulty": 20, "prompt": "", "grader": {"kind": "reference"}}
    assert CommandSolver("true").solve(ref_task, ROM).outcome == "lane-error"


def test_tree_digest_sees_content_mode_and_links(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("1")
    d0 = tree_digest(tmp_path)
    (tmp_path / "a").chmod(0o755)
    d1 = tree_digest(tmp_path)
    (tmp_path / "l").symlink_to("a")
    d2 = tree_digest(tmp_path)
    (tmp_path / "empty").mkdir()
    d3 = tree_digest(tmp_path)
    assert len({d0, d1, d2, d3}) == 4
