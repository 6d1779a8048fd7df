"""What one sandboxed grade costs over a bare pytest run in the same sandbox: the grader's own overhead.

A grade (:func:`acx_oci.sandbox.grader.grade`) stages the submission, boots pytest behind the tamper guard
(snapshots of the runner before and after each test, an audit hook, an observer process) and reads the report
back. The floor is ``python3 -I -B -m pytest`` on the same hidden file in a bubblewrap sandbox of the same
spec, with no boot, no guard and no staging. Both run in one process, interleaved round by round, on hidden
files of 4 and of 200 trivial tests (the guard's cost grows with the tests: certification grades exams of
hundreds of tests). Prints the median of each and the ratio to the floor.

Run: python benchmarks/grade.py [--n 9]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from acx_oci.sandbox import SandboxSpec, grade, run

SIZES = (4, 200)


def hidden(tests: int) -> str:
    """A hidden test file of ``tests`` tests that each read the submission's file: harness cost, not test cost."""
    body = "".join(f"def test_{i}():\n    assert open('/workspace/solution.py').read().startswith('def')\n\n"
                   for i in range(tests))
    return "# hidden\n" + body


def floor_once(tests: Path, sub: Path) -> float:
    """Seconds for a bare pytest on ``tests`` in a sandbox (the submission bound where the grade binds it)."""
    spec = SandboxSpec(ro_binds=((tests, "/hidden"), (sub, "/workspace")), chdir="/hidden",
                       env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"})
    start = time.perf_counter()
    res = run(spec, ["/usr/bin/python3", "-I", "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "/hidden"])
    took = time.perf_counter() - start
    if res.returncode != 0:
        raise SystemExit(f"the floor's pytest failed (exit {res.returncode}): {res.stdout[-300:]!r}")
    return took


def grade_once(tests: Path, sub: Path) -> float:
    """Seconds for the product's grade of ``sub`` against ``tests`` (it must pass)."""
    start = time.perf_counter()
    res = grade(sub, tests)
    took = time.perf_counter() - start
    if not res.passed:
        raise SystemExit(f"the grade did not pass (exit {res.returncode}): {res.stdout[-300:]!r}")
    return took


def main() -> int:
    """Measure, print, and return 0 (a benchmark reports; it does not fail on a slow machine)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=9, help="rounds (each runs every case once)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="acx-bench-grade-"))
    try:
        sub = work / "sub"
        sub.mkdir()
        (sub / "solution.py").write_text("def f():\n    return 1\n", "utf-8")
        dirs = {}
        for n in SIZES:
            d = work / f"tests{n}"
            d.mkdir()
            (d / "test_hidden.py").write_text(hidden(n), "utf-8")
            os.chmod(d, 0o755)
            dirs[n] = d
        os.chmod(sub, 0o755)
        os.chmod(work, 0o755)
        times: dict[str, list[float]] = {}
        for n in SIZES:  # warm the page cache and .pyc files first
            floor_once(dirs[n], sub)
            grade_once(dirs[n], sub)
        for _ in range(args.n):
            for n in SIZES:
                times.setdefault(f"floor {n}", []).append(floor_once(dirs[n], sub))
                times.setdefault(f"grade {n}", []).append(grade_once(dirs[n], sub))
        print(f"grade vs bare pytest in the same sandbox, {args.n} rounds, load average {os.getloadavg()[0]:.2f}")
        for n in SIZES:
            floor, ours = statistics.median(times[f"floor {n}"]), statistics.median(times[f"grade {n}"])
            print(f"  {n:4d} tests: floor {floor:.3f} s  grade {ours:.3f} s  ratio {ours / floor:.2f}  "
                  f"(+{ours - floor:.3f} s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
