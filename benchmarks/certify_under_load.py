"""Issue 37's acceptance: certifying bench-py gives the same verdicts with every core saturated as idle.

Runs ``acx-oci exam certify SUITE --json`` twice, each into a fresh ``--out`` (no cache): first as the
machine is, then with one busy-looping process per core (``--busy``, default ``os.cpu_count()``) running
for the whole run. Compares each exam's verdict (certified, and the stages and facts that refused it),
counts harness lane errors, checks progress lines came on stderr as exams finished, and prints the
timings. ``--jobs-only`` instead certifies twice idle, with ``--jobs 1`` and with ``--jobs N``, to see
how the exam-level pool scales. ``--limit N`` certifies the suite's first N tasks (a copy of the suite
with ``benchmark.json`` cut to them). Exit 0 when the two runs agree on every exam.

Run: python benchmarks/certify_under_load.py [--suite testdata/bench-py] [--jobs 2] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acx_oci.model.exam_record import failures  # noqa: E402

BUSY = "while True:\n    pass\n"


def cut_suite(suite: Path, limit: int | None, tmp: Path) -> Path:
    """``suite`` itself, or a copy holding its first ``limit`` tasks."""
    if limit is None:
        return suite
    copy = tmp / "suite"
    shutil.copytree(suite, copy)
    doc = json.loads((copy / "benchmark.json").read_text())
    doc["tasks"] = doc["tasks"][:limit]
    (copy / "benchmark.json").write_text(json.dumps(doc, indent=2))
    return copy


def certify(suite: Path, out: Path, jobs: int, gold_runs: int) -> dict[str, Any]:
    """One certification: its seconds, the JSON document, and the progress lines seen on stderr (timed)."""
    argv = [sys.executable, "-m", "acx_oci", "exam", "certify", str(suite), "--out", str(out), "--jobs", str(jobs),
            "--gold-runs", str(gold_runs), "--json"]
    t0 = time.monotonic()
    with (out.parent / f"{out.name}.json").open("w+") as doc_file:  # a file: a pipe would fill and block it
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=doc_file, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        lines: list[tuple[float, str]] = []
        for line in proc.stderr:  # progress as it goes: each line timed when it arrives
            lines.append((time.monotonic() - t0, line.rstrip("\n")))
            if line.startswith("exam certify ["):
                print(f"  {time.monotonic() - t0:7.1f}s {line.rstrip()}", file=sys.stderr, flush=True)
        proc.wait()
        doc_file.seek(0)
        doc = json.loads(doc_file.read())
    return {"seconds": time.monotonic() - t0, "doc": doc, "progress": [t for t, ln in lines
                                                                       if ln.startswith("exam certify [")]}


def verdicts(doc: dict[str, Any]) -> dict[str, Any]:
    """exam -> (certified, the refusing (stage, fact) pairs): what must not change with load."""
    return {r["exam"]: (r["certified"], sorted(failures(r))) for r in doc["records"]}


def lane_errors(doc: dict[str, Any]) -> list[str]:
    return [r["exam"] for r in doc["records"] if any(s.get("laneError") for s in r["stages"].values())]


def busy(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(n)]


def report(name: str, run: dict[str, Any]) -> None:
    recs = run["doc"]["records"]
    progress = run["progress"]
    first = f", first result after {progress[0]:.1f}s" if progress else ""
    print(f"{name}: {run['seconds']:.1f}s for {len(recs)} exams ({run['seconds'] / max(1, len(recs)):.2f}s/exam), "
          f"{sum(r['certified'] for r in recs)} certified, {len(lane_errors(run['doc']))} harness lane errors, "
          f"{len(progress)} progress lines{first}; load average {os.getloadavg()[0]:.1f}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", type=Path, default=ROOT / "testdata" / "bench-py")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--gold-runs", type=int, default=3)
    ap.add_argument("--limit", type=int, default=None, help="certify the suite's first N tasks only")
    ap.add_argument("--busy", type=int, default=os.cpu_count() or 2, help="busy processes in the loaded run")
    ap.add_argument("--jobs-only", action="store_true", help="compare --jobs 1 with --jobs N, both idle")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="acx-certify-load-") as tmp:
        suite = cut_suite(args.suite, args.limit, Path(tmp))
        print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} at start", flush=True)
        if args.jobs_only:
            a = certify(suite, Path(tmp) / "jobs1", 1, args.gold_runs)
            report("--jobs 1", a)
            b = certify(suite, Path(tmp) / "jobsN", args.jobs, args.gold_runs)
            report(f"--jobs {args.jobs}", b)
            print(f"speed-up {a['seconds'] / b['seconds']:.2f}x")
        else:
            a = certify(suite, Path(tmp) / "idle", args.jobs, args.gold_runs)
            report("as the machine is", a)
            hogs = busy(args.busy)
            try:
                b = certify(suite, Path(tmp) / "loaded", args.jobs, args.gold_runs)
            finally:
                for h in hogs:
                    h.kill()
                    h.wait()
            report(f"with {args.busy} busy processes", b)
        va, vb = verdicts(a["doc"]), verdicts(b["doc"])
        differ = sorted(e for e in set(va) | set(vb) if va.get(e) != vb.get(e))
        for e in differ:
            print(f"  DIFFERS {e}: {va.get(e)} vs {vb.get(e)}")
        print(f"verdicts: {'the same on all' if not differ else f'{len(differ)} differ of'} {len(va)} exams")
        return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
