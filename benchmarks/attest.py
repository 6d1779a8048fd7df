"""What running the signed ROM in a proven sandbox costs, measured in one run.

Setup: a suite of about 70 tasks generated here (the bench-py tasks, each
repeated under fresh ids, so the held-out slice holds at least 40), the example
agent (``testdata/agents/simple_agent.py``) as a cartridge whose runtime runs
it, all on an OCI image layout in a temporary directory.

Measured:

- ``attest --solver rom`` over 40 games at ``--jobs 1`` and ``--jobs 2``: wall
  time and the speed-up (target: >= 1.6x at 2 jobs on 2 cores);
- per game, the agent command inside the sandbox against the same command run
  bare in a fresh workspace (target: sandbox <= 1.3x bare). The floor is the
  bare run, measured in the same process, same tasks.
- the Dask row (its own suite, an agent that sleeps 0.5 s per task): 40 games at
  ``--executor local --jobs 1`` (the floor), ``local --jobs 2`` and ``dask://`` on a
  real scheduler with two one-thread workers on this machine, each as a speed-up
  over the floor (target: >= 1.6x for both on 2 cores), and Dask's dispatch
  overhead per game (an empty task's round trip through the same scheduler, and
  the Dask run's wall time against local --jobs 2, per game).

Run: python benchmarks/attest.py [--games 40] [--tasks 70] [--rows rom,dask]
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acx_oci.cli import main  # noqa: E402
from acx_oci.sandbox import run, staging_dir  # noqa: E402
from acx_oci.sandbox.tree import write_files  # noqa: E402
from acx_oci.services.artifacts import benchmark as bm  # noqa: E402
from acx_oci.solvers.rom import game_spec, materialize_rom, new_rom_dir  # noqa: E402

AGENT = ROOT / "testdata" / "agents" / "simple_agent.py"
RUNTIME = {"command": ["python3", "/rom/skills/agent.py"], "network": "none"}


def cli(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    if res.exit_code not in (0, 1):
        raise SystemExit(f"acx-oci {' '.join(args[:2])} failed ({res.exit_code}): {res.output}")
    return res.output


def make_suite(out: Path, n: int) -> None:
    """bench-py's tasks repeated under new ids until there are ``n`` (difficulties kept)."""
    bench, _ = bm.load_suite_dir(ROOT / "testdata" / "bench-py")
    tasks = [dict(t, id=f"perf-{i:04d}") for i, t in enumerate((bench.tasks * (n // len(bench.tasks) + 1))[:n], 1)]
    doc = {**bench.meta, "id": "acx-bench-perf", "tasks": tasks}
    bm.write_suite_dir(out, doc)


def timed_attest(tmp: Path, layout: str, games: int, jobs: int, executor: str = "local"
                 ) -> tuple[float, dict[str, object]]:
    name = f"{jobs}-{executor.split(':')[0]}"
    out = tmp / f"att-{name}"
    t0 = time.perf_counter()
    text = cli("attest", f"{layout}:agent", "--benchmark", f"{layout}:bench", "--key", str(tmp / "verifier.key"),
               "--state", str(tmp / f"state-{name}"), "--issuer", _did(tmp), "--games", str(games),
               "--jobs", str(jobs), "-o", str(out), "--json", "--cooldown", "0", "--executor", executor)
    return time.perf_counter() - t0, json.loads(text)


def _did(tmp: Path) -> str:
    return str(json.loads((tmp / "verifier.did.json").read_text())["id"])


def per_game_overhead(tasks: list[dict[str, object]]) -> tuple[float, float]:
    """Median seconds per task: the agent inside the game sandbox, and the same command bare."""
    rom = materialize_rom({"skills/agent.py": AGENT.read_bytes()}, new_rom_dir() / "rom")
    boxed, bare = [], []
    try:
        for task in tasks:
            files = (task.get("workspace") or {}).get("files") or {}  # type: ignore[union-attr]
            for mode in ("boxed", "bare"):
                root = staging_dir("acx-perf-")
                try:
                    ws, td = root / "workspace", root / "task"
                    ws.mkdir(mode=0o777)
                    td.mkdir(mode=0o755)
                    write_files(ws, files)  # type: ignore[arg-type]
                    (td / "PROMPT.md").write_text(str(task.get("prompt", "")))
                    for p in [ws, *ws.rglob("*")]:
                        p.chmod(0o777 if p.is_dir() else 0o666)
                    t0 = time.perf_counter()
                    if mode == "boxed":
                        run(game_spec(rom, RUNTIME, workspace=ws, task_dir=td), RUNTIME["command"])  # type: ignore[arg-type]
                        boxed.append(time.perf_counter() - t0)
                    else:
                        subprocess.run(["python3", str(rom / "skills" / "agent.py")], cwd=ws, check=False,
                                       capture_output=True, timeout=60,
                                       env={"PATH": "/usr/bin:/bin", "ACX_WORKSPACE": str(ws),
                                            "ACX_PROMPT_FILE": str(td / "PROMPT.md"), "HOME": str(root)})
                        bare.append(time.perf_counter() - t0)
                finally:
                    shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(rom.parent, ignore_errors=True)
    return statistics.median(boxed), statistics.median(bare)


SLOW_AGENT = """import runpy, time
time.sleep(0.5)
runpy.run_path("/rom/skills/simple_agent.py", run_name="__main__")
"""


def _noop() -> int:
    return 0


def dask_row(games: int, tasks: int) -> None:
    """local --jobs 1 / --jobs 2 / two Dask workers over the same 40 games of a 0.5 s agent."""
    from distributed import Client

    from tests.support.dask_cluster import start_cluster

    with tempfile.TemporaryDirectory(prefix="acx-bench-dask-") as d:
        tmp = Path(d)
        layout = f"oci:{tmp / 'layout'}"
        cli("keygen", str(tmp / "publisher"))
        cli("keygen", str(tmp / "verifier"))
        make_suite(tmp / "suite", tasks)
        cli("benchmark", "push", str(tmp / "suite"), f"{layout}:bench", "--seal-to", str(tmp / "verifier.did.json"))
        cli("cartridge", "init", str(tmp / "agent"), "--id", "io.example/slow-agent", "--version", "1.0.0",
            "--capability", "implement-feature[python+pytest]@software-engineering",
            "--runtime", "python3 /rom/skills/agent.py")
        (tmp / "agent" / "skills" / "agent.py").write_text(SLOW_AGENT)
        shutil.copy(AGENT, tmp / "agent" / "skills" / "simple_agent.py")
        cli("cartridge", "push", str(tmp / "agent"), f"{layout}:agent", "--key", str(tmp / "publisher.key"))
        t1, r1 = timed_attest(tmp, layout, games, 1, "local")
        t2, r2 = timed_attest(tmp, layout, games, 2, "local")
        cluster = start_cluster(tmp / "cluster")
        try:
            cluster.add_worker("w1")
            cluster.add_worker("w2")
            td, rd = timed_attest(tmp, layout, games, 2, "dask://" + cluster.address.removeprefix("tcp://"))
            with Client(cluster.address, set_as_default=False) as client:
                trips = []
                for _ in range(40):
                    t0 = time.perf_counter()
                    client.submit(_noop, pure=False).result()
                    trips.append(time.perf_counter() - t0)
        finally:
            cluster.stop()
        same = all(r1[k] == r[k] for r in (r2, rd) for k in ("mu", "sigma", "acxLevel"))
        placed: dict[str, int] = {}
        for p in (tmp / "att-2-dask" / "games").glob("*.dsse.json"):
            pred = json.loads(base64.b64decode(json.loads(p.read_bytes())["payload"]))["predicate"]
            placed[pred["executor"]["worker"]] = placed.get(pred["executor"]["worker"], 0) + 1
        print(f"Dask row: {games} games of an agent sleeping 0.5 s per task ({r1['games']} rated):")
        print(f"  local --jobs 1: {t1:7.2f} s   1.00x (floor)")
        print(f"  local --jobs 2: {t2:7.2f} s   {t1 / t2:4.2f}x (target >= 1.6x)")
        print(f"  dask, 2 workers: {td:6.2f} s   {t1 / td:4.2f}x (target >= 1.6x); same mu/sigma/level: {same}; "
              f"games per worker: {dict(sorted(placed.items()))}")
        print(f"  Dask dispatch per game: empty-task round trip median {statistics.median(trips) * 1000:.1f} ms; "
              f"dask vs local --jobs 2: {(td - t2) / games * 1000:+.0f} ms per game "
              "(includes proving containment once per worker)")


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--tasks", type=int, default=70)
    ap.add_argument("--rows", default="rom,dask", help="rom (the sandbox rows), dask (the executor row), or both")
    args = ap.parse_args()
    rows = set(args.rows.split(","))
    if "dask" in rows:
        dask_row(args.games, args.tasks)
    if "rom" not in rows:
        return
    with tempfile.TemporaryDirectory(prefix="acx-bench-attest-") as d:
        tmp = Path(d)
        layout = f"oci:{tmp / 'layout'}"
        cli("keygen", str(tmp / "publisher"))
        cli("keygen", str(tmp / "verifier"))
        make_suite(tmp / "suite", args.tasks)
        cli("benchmark", "push", str(tmp / "suite"), f"{layout}:bench", "--seal-to", str(tmp / "verifier.did.json"))
        cli("cartridge", "init", str(tmp / "agent"), "--id", "io.example/perf-agent", "--version", "1.0.0",
            "--capability", "implement-feature[python+pytest]@software-engineering",
            "--runtime", "python3 /rom/skills/agent.py")
        shutil.copy(AGENT, tmp / "agent" / "skills" / "agent.py")
        cli("cartridge", "push", str(tmp / "agent"), f"{layout}:agent", "--key", str(tmp / "publisher.key"))
        t1, r1 = timed_attest(tmp, layout, args.games, 1)
        t2, r2 = timed_attest(tmp, layout, args.games, 2)
        same = all(r1[k] == r2[k] for k in ("mu", "sigma", "acxLevel"))
        print(f"attest --solver rom, {args.games} games ({r1['games']} rated, pass rate {r1['passRate']:.0%}):")
        print(f"  --jobs 1: {t1:7.2f} s   --jobs 2: {t2:7.2f} s   speed-up {t1 / t2:4.2f}x (target >= 1.6x); "
              f"same mu/sigma/level: {same}")
        bench, _ = bm.load_suite_dir(ROOT / "testdata" / "bench-py")
        boxed, bare = per_game_overhead(list(bench.tasks[:15]))
        print(f"agent per task (median of 15): sandboxed {boxed * 1000:6.1f} ms, bare {bare * 1000:6.1f} ms, "
              f"ratio {boxed / bare:4.2f}x (target <= 1.3x)")


if __name__ == "__main__":
    main_()
