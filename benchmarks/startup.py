"""How long ``acx-oci`` takes to start: ``--version`` and ``--help`` against ``python -c pass``, in one run.

Each command runs as a fresh process (``python -m acx_oci``, this checkout first on the path), so the
time includes the interpreter, ``site`` and every import the command tree pulls in. The runs are
interleaved (one of each per round), so load from other processes falls on all of them alike. Prints
the median and p90 of each, the overhead above the floor, and issue 25's target: ``--version`` and
``--help`` <= 0.3 s median on this machine.
Run: python benchmarks/startup.py [--n 21]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.3

CASES = {
    "floor (python -c pass)": [sys.executable, "-c", "pass"],
    "acx-oci --version": [sys.executable, "-m", "acx_oci", "--version"],
    "acx-oci --help": [sys.executable, "-m", "acx_oci", "--help"],
    "acx-oci resolve --help": [sys.executable, "-m", "acx_oci", "resolve", "--help"],
}


def once(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from spawning ``argv`` to its exit (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env, cwd=ROOT)
    return time.perf_counter() - start


def main() -> int:
    """Measure, print, and return 0 (a benchmark reports; it does not fail on a slow machine)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=21, help="runs of each command")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for argv in CASES.values():  # warm the page cache and .pyc files first
        once(argv, env)
    for _ in range(args.n):
        for name, argv in CASES.items():
            times[name].append(once(argv, env))
    floor = statistics.median(times["floor (python -c pass)"])
    print(f"startup, {args.n} runs each, load average {os.getloadavg()[0]:.2f}")
    for name, ts in times.items():
        med = statistics.median(ts)
        p90 = sorted(ts)[int(0.9 * (len(ts) - 1))]
        print(f"  {name:26s} median {med:.3f} s  p90 {p90:.3f} s  (+{med - floor:.3f} s over the floor)")
    for name in ("acx-oci --version", "acx-oci --help"):
        med = statistics.median(times[name])
        print(f"  target {name} <= {TARGET} s median: {'met' if med <= TARGET else 'NOT met'} ({med:.3f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
