"""How long ``acx-oci`` takes to start: ``--version`` and ``--help`` against ``python -c pass``, in one run.

Each command runs as a fresh process (``python -m acx_oci``, this checkout first on the path), so the
time includes the interpreter, ``site`` and every import the command tree pulls in. The runs are
interleaved (one of each per round), so load from other processes falls on all of them alike. Prints
the median and p90 of each, the overhead above the floor, and issue 25's target: ``--version`` and
``--help`` <= 0.3 s median on this machine.
With ``--before PATH`` (another checkout, e.g. main before the lazy group) its ``--version`` and ``--help``
are measured in the same rounds. Run: python benchmarks/startup.py [--n 21] [--before /work/main]
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


def once(argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> float:
    """Seconds from spawning ``argv`` in ``cwd`` to its exit (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env, cwd=cwd)
    return time.perf_counter() - start


def main() -> int:
    """Measure, print, and return 0 (a benchmark reports; it does not fail on a slow machine)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=21, help="runs of each command")
    parser.add_argument("--before", type=Path, help="another checkout to measure alongside (its own tree first)")
    args = parser.parse_args()
    cases = {name: (argv, ROOT) for name, argv in CASES.items()}
    if args.before is not None:
        for flag in ("--version", "--help"):
            cases[f"before: acx-oci {flag}"] = ([sys.executable, "-m", "acx_oci", flag], args.before.resolve())
    times: dict[str, list[float]] = {name: [] for name in cases}
    for argv, cwd in cases.values():  # warm the page cache and .pyc files first
        once(argv, {**os.environ, "PYTHONPATH": str(cwd)}, cwd)
    for _ in range(args.n):
        for name, (argv, cwd) in cases.items():
            times[name].append(once(argv, {**os.environ, "PYTHONPATH": str(cwd)}, cwd))
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
