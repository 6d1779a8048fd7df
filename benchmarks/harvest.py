"""Issue 43's acceptance run: `exam harvest` on several repositories, with the docs' command and nothing else.

For each ``--repo`` it runs ``acx-oci exam harvest --repo R [--since D] [--until D] --max N -o OUT/suite-NAME
--out OUT/certs-NAME --classification public --env-store STORE --jobs J --json`` (the command in
``docs/exams-from-repositories.md``), then prints the funnel per repository and in all: candidates, imported,
environment, referencePasses, failToPass, certified; the share of ``failToPass`` candidates that certify (the
issue asks 80%); every refusal with the record's words, to read for tool faults; the wall time, the median
certification seconds per exam (``certify-events.jsonl``) and the seconds per environment image the run had to
build (from the harvest's own ``--json-events`` stage events, timed as they arrive: from an exam's first
``environment build`` stage to its next stage). Run again with the same ``--out``: each harvest resumes.

Run: python benchmarks/harvest.py --out /tmp/h43 --env-store oci:/tmp/h43/env --max 12 --repo DIR [--repo DIR ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

STAGES = ("candidates", "imported", "environment", "referencePasses", "failToPass", "certified")


def harvest(repo: Path, out: Path, args: argparse.Namespace) -> dict[str, Any]:
    name = repo.name if repo.name != "repo" else repo.parent.name.split("+")[-1]
    cmd = [sys.executable, "-m", "acx_oci", "exam", "harvest", "--repo", str(repo), "--max", str(args.max),
           "-o", str(out / f"suite-{name}"), "--out", str(out / f"certs-{name}"), "--classification", "public",
           "--env-store", args.env_store, "--jobs", str(args.jobs), "--json"]
    for flag, value in (("--since", args.since), ("--until", args.until)):
        if value:
            cmd += [flag, value]
    cmd.append("--json-events")
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    builds = _build_seconds(proc)
    stdout = proc.stdout.read() if proc.stdout else ""
    proc.wait()
    wall = time.monotonic() - t0
    try:
        doc = json.loads(stdout)
    except ValueError:
        return {"repo": name, "exit": proc.returncode, "error": stdout[-300:], "wall": wall}
    events = out / f"certs-{name}" / "certify-events.jsonl"
    seconds = [e["seconds"] for e in map(json.loads, events.read_text().splitlines())
               if e.get("event") == "exam" and not e.get("cached")] if events.exists() else []
    return {"repo": name, "exit": proc.returncode, "wall": wall, "funnel": doc["funnel"],
            "candidates": doc["candidates"], "medianExamSeconds": statistics.median(seconds) if seconds else None,
            "exams": len(seconds), "imageBuilds": len(builds),
            "medianBuildSeconds": statistics.median(builds) if builds else None}


def _build_seconds(proc: subprocess.Popen[str]) -> list[float]:
    """The harvest's stderr passed through, its stage events timed as they arrive: per exam whose image was
    built, the seconds from its first ``environment build`` stage to its next stage (build, push and unpack)."""
    started: dict[str, float] = {}
    out: list[float] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        now = time.monotonic()
        sys.stderr.write(line)
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if not isinstance(ev, dict) or ev.get("event") != "stage":
            continue
        exam, stage = str(ev.get("exam")), str(ev.get("stage"))
        if stage.startswith("environment build") and exam not in started:
            started[exam] = now
        elif exam in started and not stage.startswith("environment"):
            out.append(now - started.pop(exam))
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| repository | " + " | ".join(STAGES) + " | certified / failToPass | wall | median per exam |",
             "| --- " * (len(STAGES) + 4) + "|"]
    total = dict.fromkeys(STAGES, 0)
    for r in rows:
        if "funnel" not in r:
            lines.append(f"| {r['repo']} | exit {r['exit']}: {r['error']!r} |")
            continue
        f = r["funnel"]
        for s in STAGES:
            total[s] += f[s]
        share = f"{f['certified'] / f['failToPass']:.0%}" if f["failToPass"] else "-"
        median = f"{r['medianExamSeconds']:.0f} s" if r["medianExamSeconds"] else "-"
        if r.get("medianBuildSeconds"):
            print(f"{r['repo']}: {r['imageBuilds']} images built, median {r['medianBuildSeconds']:.1f} s each "
                  "(build, push, unpack)", file=sys.stderr)
        lines.append(f"| {r['repo']} | " + " | ".join(str(f[s]) for s in STAGES)
                     + f" | {share} | {r['wall'] / 60:.1f} min | {median} |")
    share = f"{total['certified'] / total['failToPass']:.0%}" if total["failToPass"] else "-"
    lines.append("| **all** | " + " | ".join(str(total[s]) for s in STAGES) + f" | {share} | | |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--repo", type=Path, action="append", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--env-store", required=True)
    ap.add_argument("--max", type=int, default=12)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--since")
    ap.add_argument("--until")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for repo in args.repo:
        rows.append(harvest(repo, args.out, args))
        (args.out / "rows.json").write_text(json.dumps(rows, indent=1))
        print(table(rows), file=sys.stderr, flush=True)
    print(table(rows))
    print("\nrefusals (the records' words):")
    for r in rows:
        for c in r.get("candidates", []):
            if not c.get("certified"):
                print(f"- {r['repo']} {c['commit'][:10]} at {c['stage']}: {c.get('verdict')}: {c.get('reason')}")


if __name__ == "__main__":
    main()
