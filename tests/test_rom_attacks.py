"""Hostile ROMs against the ROM solver: each test is an attack that once worked (real bubblewrap, no mocks)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acx_oci import sandbox
from acx_oci.evaluation import engine
from acx_oci.evaluation.solver import SolverResult
from acx_oci.model.gamerecords import CERTIFIED_PASS, INVALID, MODEL_FAIL
from acx_oci.services.benchmark import _expand_task, _read_tree
from acx_oci.solvers.rom import RomSolver, game_spec, materialize_rom, new_rom_dir

BENCH = Path(__file__).resolve().parent.parent / "testdata" / "bench-py"
ROM_DIGEST = "sha256:" + "0" * 64

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian 'bubblewrap') not installed")


def _task(tid: str = "py-0001") -> dict[str, Any]:
    return _expand_task({"id": tid, "dir": f"tasks/{tid}"}, BENCH, _read_tree(BENCH / "grader-common", "common"))


@pytest.fixture()
def play() -> Iterator[Any]:
    dirs: list[Path] = []

    def _play(agent: str, tid: str = "py-0001") -> SolverResult:
        runtime = {"command": ["python3", "/rom/agent.py"], "limits": {"timeSeconds": 20}}
        rd = new_rom_dir()
        dirs.append(rd)
        materialize_rom({"agent.py": agent.encode()}, rd / "rom")
        proof = sandbox.check([], game_spec(rd / "rom", runtime))
        assert proof["proven"], proof
        return RomSolver(rd / "rom", runtime, proof).solve(_task(tid), ROM_DIGEST)

    yield _play
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


# --- abstaining instead of failing ------------------------------------------------------------------------------

FIFO_AGENT = "import os\nos.mkfifo('/workspace/skip')\n"


def test_a_fifo_in_the_workspace_is_a_fail_not_an_unrated_invalid(play: Any) -> None:
    """An agent that cannot solve a task leaves a FIFO: copy_tree skips it, the digests differ, and the game
    used to be ``invalid`` (unrated, and not counted by the harness review), so failures could be dropped at will.
    """
    res = play(FIFO_AGENT)
    assert res.outcome == MODEL_FAIL, res.detail
    assert res.facts["conditions"]["grader"] is False


REPORT_TAMPER_AGENT = r'''
sol = """
import os, subprocess
def add(a, b):
    if os.fork() == 0:  # outlive this call; wreck pytest's junit report once it is written
        os.setsid()
        import time
        for _ in range(4000):
            try:
                if os.path.getsize("/grader-out/report.xml") > 0:
                    time.sleep(0.05)
                    open("/grader-out/report.xml", "w").close()
            except OSError:
                pass
            time.sleep(0.005)
        os._exit(0)
    return 0
"""
open("/workspace/solution.py", "w").write(sol)
'''


def test_a_wrecked_report_is_a_fail_not_an_unrated_invalid(play: Any) -> None:
    """The submission (pytest's uid) empties /grader-out/report.xml after pytest wrote it: used to be ``invalid``."""
    res = play(REPORT_TAMPER_AGENT)
    assert res.outcome == MODEL_FAIL and "inconsistent" in res.detail, res.detail


def test_invalid_games_count_in_the_harness_review() -> None:
    games = [engine.Game(i, f"t{i}", INVALID if i <= 2 else CERTIFIED_PASS, "", {}, None, {}) for i in range(1, 11)]
    assert any(r.startswith(engine.EXAMINER_UNRELIABLE) for r in engine.review(games, 10))


# --- workspaces the host cannot walk ----------------------------------------------------------------------------

DEEP_AGENT = "import os\nos.chdir('/workspace')\nfor _ in range(1500):\n    os.mkdir('d')\n    os.chdir('d')\n"


def test_a_deep_workspace_is_a_fail_not_a_verifier_crash(play: Any) -> None:
    """1500 nested dirs: os.walk recursed into a RecursionError that escaped the solver (a traceback)."""
    res = play(DEEP_AGENT)
    assert res.outcome == MODEL_FAIL, res.detail


def test_a_non_utf8_name_is_a_fail_not_a_lane_error(play: Any) -> None:
    """A non-UTF-8 file name made the tree digest raise: a lane error the agent chose (unrated)."""
    res = play("open(b'/workspace/\\xff.txt', 'wb').write(b'x')\n")
    assert res.outcome == MODEL_FAIL, res.detail
