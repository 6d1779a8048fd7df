"""Hostile ROMs against the ROM solver: each test is an attack that once worked (real bubblewrap, no mocks)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acx_oci import sandbox
from acx_oci.files import read_text_tree
from acx_oci.model import CERTIFIED_PASS, INVALID, MODEL_FAIL
from acx_oci.rating import SolverResult, engine
from acx_oci.services.artifacts.benchmark import _expand_task
from acx_oci.solvers import RomSolver, game_spec, materialize_rom, new_rom_dir

BENCH = Path(__file__).resolve().parent.parent.parent / "testdata" / "bench-py"
ROM_DIGEST = "sha256:" + "0" * 64

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian 'bubblewrap') not installed")


def _task(tid: str = "py-0001") -> dict[str, Any]:
    return _expand_task({"id": tid, "dir": f"tasks/{tid}"}, BENCH, read_text_tree(BENCH, "grader-common", "common"))


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
import os
import re
def add(a, b):  # runs at grade time as pytest's uid: send pytest's junit report to /dev/null
    try:
        os.symlink("/dev/null", "/grader-out/report.xml")
    except OSError:
        pass
    return 0
"""
open("/workspace/solution.py", "w").write(sol)
'''


def test_a_wrecked_report_is_a_fail_not_an_unrated_invalid(play: Any) -> None:
    """The submission (pytest's uid) points /grader-out/report.xml at /dev/null: the game used to be ``invalid``."""
    res = play(REPORT_TAMPER_AGENT)
    # Either the wrecking lands (an inconsistent report) or the harness's Landlock confinement stops it (the
    # submission's child cannot reach /grader-out): both are the model's fail, never an unrated invalid.
    assert res.outcome == MODEL_FAIL, res.detail


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


# --- reading the hidden tests at grade time ---------------------------------------------------------------------

PEEK_SOLUTION = r'''
import glob, json, re
_M = {}
for f in glob.glob("/grader/**/*.py", recursive=True) + glob.glob("/tmp/**/*.py", recursive=True):
    src = open(f).read()
    vals = dict(re.findall(r'^(\w+) = json\.loads\((".*")\)$', src, re.M))
    for k, v in vals.items():
        if k + "_EXPECTED" in vals:
            ins, outs = json.loads(json.loads(v)), json.loads(json.loads(vals[k + "_EXPECTED"]))
            _M.update((json.dumps(a), o) for a, o in zip(ins, outs))

def __getattr__(name):  # any task's function: replay the expected value
    def f(*args):
        o = _M[json.dumps(list(args))]
        if "raised" in o:
            raise type(o["raised"], (Exception,), {})()
        return o["ok"]
    return f
'''
PEEK_AGENT = f"open('/workspace/solution.py', 'w').write({PEEK_SOLUTION!r})\n"


@pytest.mark.parametrize("tid", ["py-0001", "py-0007"])
def test_a_submission_reading_the_hidden_tests_does_not_pass(play: Any, tid: str) -> None:
    """A universal 20-line cheat (no task solved) read /grader/tests at grade time and replayed the expected values:
    ``certified-pass`` on every task. The tests now arrive on stdin and are deleted once pytest collected them."""
    res = play(PEEK_AGENT, tid)
    assert res.outcome == MODEL_FAIL, res.detail


MEM_AGENT = r'''
sol = """
import os
def add(a, b):
    seen = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    cmd = fh.read()
                    if not cmd.startswith(b"/usr/bin/python3") or b"pytest.main" not in cmd:
                        continue
                with open(f"/proc/{pid}/maps") as m:
                    start = int(m.readline().split("-")[0], 16)
                with open(f"/proc/{pid}/mem", "rb") as fh:
                    fh.seek(start)
                    fh.read(16)
                seen.append("read")
            except OSError:
                seen.append("denied")
    return 3 if seen and "read" not in seen else -1
"""
open("/workspace/solution.py", "w").write(sol)
'''


def test_the_submission_cannot_read_pytests_memory(play: Any) -> None:
    """pytest's process (holding the tests once their files are gone) is non-dumpable: the same-uid submission
    cannot read its /proc/PID/mem (``add`` returns the right answer for the visible case only when denied)."""
    res = play(MEM_AGENT)
    failed, total = map(int, re.search(r"\((\d+) of (\d+)\)", res.detail).groups())  # type: ignore[union-attr]
    assert res.outcome == MODEL_FAIL and failed == total - 1, res.detail  # only the visible example passed


# --- the ROM itself ---------------------------------------------------------------------------------------------


def test_rom_files_are_bounded_in_total_before_any_fetch(tmp_path: Path) -> None:
    """A signed ROM may list 10,000 entries naming one 64 MiB blob: rom_files read them all into memory
    (640 GB). The declared total is now refused before anything is fetched."""
    import dataclasses

    from click.testing import CliRunner

    from acx_oci.cli import main
    from acx_oci.errors import UsageError
    from acx_oci.model import MAX_ROM_BYTES
    from acx_oci.oci import open_store
    from acx_oci.services.artifacts import load_cartridge, rom_files

    def cli(*args: str) -> None:
        res = CliRunner().invoke(main, list(args))
        assert res.exit_code == 0, res.output

    cli("keygen", str(tmp_path / "pub"))
    cli("cartridge", "init", str(tmp_path / "c"), "--id", "io.example/big", "--version", "1.0.0", "--capability",
        "implement-feature[python+pytest]@software-engineering", "--runtime", "python3 /rom/skills/agent.py")
    (tmp_path / "c" / "skills" / "agent.py").write_text("print('hi')\n", "utf-8")
    cli("cartridge", "push", str(tmp_path / "c"), f"oci:{tmp_path / 'layout'}:big", "--key", str(tmp_path / "pub.key"))
    store = open_store(f"oci:{tmp_path / 'layout'}:big")
    loaded = load_cartridge(store, "big", None)
    entry = dict(loaded.rom["files"][0], size=16 * MAX_ROM_BYTES)
    assert rom_files(store, loaded)  # the honest ROM materialises
    files = [dict(entry, path=f"skills/f{i}") for i in range(10_000)]
    huge = dataclasses.replace(loaded, rom={**loaded.rom, "files": files})
    with pytest.raises(UsageError, match="total"):
        rom_files(store, huge)


# --- host limits the agent could choose ---------------------------------------------------------------------

LONG_PATH_AGENT = r'''
import os
fd = os.open("/workspace", os.O_RDONLY | os.O_DIRECTORY)
for i in range(24):  # 24 x 241 bytes: the joined path is ~5.8 KB, past the host's PATH_MAX of 4096
    name = ("d%02d" % i) + "x" * 238
    os.mkdir(name, dir_fd=fd)
    nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = nxt
os.close(os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
'''


def test_a_workspace_deeper_than_the_hosts_path_limit_is_the_agents_fail_not_a_lane_error(play: Any) -> None:
    """Nested 240-character names make the joined host path too long for path-based host code (ENAMETOOLONG;
    reported as a lane-error, "harness error" -- unrated, at the agent's choice). The game must stay the agent's
    result; the unit test below shows the walk itself, which raised ENAMETOOLONG before it used descriptors."""
    res = play(LONG_PATH_AGENT)
    assert res.outcome == MODEL_FAIL, res.detail
    assert "harness error" not in res.detail


def test_tree_digest_and_copy_walk_past_path_max(tmp_path: Path) -> None:
    from acx_oci.sandbox import copy_tree, tree_digest

    root = tmp_path / "ws"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(24):
        name = f"d{i:02d}" + "x" * 238
        os.mkdir(name, dir_fd=fd)
        nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    with os.fdopen(os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as fh:
        fh.write("x")
    os.close(fd)
    digest = tree_digest(root)
    copy_tree(root, tmp_path / "copy")
    assert tree_digest(tmp_path / "copy") == digest
