"""Exams from real upstream fixes: import each fix commit in git mode and certify it, one row per fix.

Setup: full-history clones (bare is fine) of real repositories, e.g. fetched with the search tool's
``fetch`` (``/work/.mirror/<owner>+<name>/repo``); the corpus stays out of this repository. Each fix is
imported with ``--base FIX^ --fix FIX`` and no hand-written patch: a fix with one source hunk has no derived
``incomplete`` control (issue 37.5, not built yet), so the script gives it the base as its incomplete control,
and no fix has a lookalike, so the ``grader`` stage always refuses; the row reports every other stage.

Measured, per fix: imported?, the stages ok (gold: the reference passes the fix's own tests, the base
fails them, none of the fix's new content in the workspace; eval; canary; publication), the first stage
and fact that refused (grader excluded), harness lane errors, wall time.

Run: python benchmarks/real_exams.py REPO:FIX [REPO:FIX ...] [--out DIR] [--json]
     python benchmarks/real_exams.py --pick REPO --count 5      # the last fix commits with one source file and tests
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from acx_oci.errors import AcxError
from acx_oci.model import exam as mx
from acx_oci.services import exams as ex
from acx_oci.services.exams import gitrepo, importer

STAGES = ("gold", "eval", "canary", "publication", "attack")
#: A patch that changes no code: the base itself stands in for the incomplete control of a one-hunk fix.
BASE_AS_INCOMPLETE = b"""--- /dev/null
+++ b/ACX_BASE_AS_INCOMPLETE.txt
@@ -0,0 +1 @@
+the base, standing in for an incomplete fix
"""


def pick(repo: Path, count: int) -> list[str]:
    """The newest non-merge commits whose message says fix and that change test files and source files."""
    out = gitrepo.run_git(repo, "log", "--no-merges", "-i", "--grep=fix", "--format=%H", "-n", "400")
    picked = []
    for sha in out.decode().split():
        names = gitrepo.run_git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", sha).decode().split()
        py = [n for n in names if n.endswith(".py")]
        tests = [n for n in py if importer.is_test_path(n)]
        if tests and len(py) > len(tests) and len(names) <= 6:
            picked.append(sha)
        if len(picked) >= count:
            break
    return picked


def one(repo: Path, fix: str, suite: Path, certs: Path) -> dict[str, Any]:
    """Import and certify one fix; the row."""
    t0 = time.monotonic()
    row: dict[str, Any] = {"repo": repo.parent.name if repo.name == "repo" else repo.name, "fix": fix[:12]}
    try:
        parts = importer.from_repo(repo, f"{fix}^", fix, incomplete_patch=None)
    except AcxError as exc:
        if "one source hunk" not in str(exc):
            return {**row, "imported": False, "refused": f"import: {exc}", "seconds": time.monotonic() - t0}
        parts = importer.from_repo(repo, f"{fix}^", fix, incomplete_patch=BASE_AS_INCOMPLETE)
    (path,) = [Path(s["dir"]) for s in importer.write_all([parts], suite)]
    (rec,) = ex.certify_suite(path, jobs=1, out=certs, progress=None)
    stages = rec["stages"]
    row.update(imported=True, stages={s: bool(stages[s]["ok"]) for s in STAGES},
               laneError=next((st.get("reason") for st in stages.values() if st.get("laneError")), None))
    refused = [(s, f) for s, f in mx.failures(rec) if s != "grader"]
    if refused:
        row["refused"] = f"{refused[0][0]}: {refused[0][1]}"[:300]
    gold = stages["gold"]
    row["leaks"] = [f["file"] for f in gold.get("leaks") or []]
    row["seconds"] = round(time.monotonic() - t0, 1)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("fixes", nargs="*", help="REPO:FIX (a clone or bare git dir, a commit)")
    ap.add_argument("--pick", type=Path, help="pick fix commits from this repository")
    ap.add_argument("--count", type=int, default=5)
    ap.add_argument("--out", type=Path, help="keep the suite and records here")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    pairs = [(Path(s.rsplit(":", 1)[0]), s.rsplit(":", 1)[1]) for s in args.fixes]
    if args.pick:
        pairs += [(args.pick, sha) for sha in pick(args.pick, args.count)]
    work = args.out or Path(tempfile.mkdtemp(prefix="acx-real-exams-"))
    rows = []
    try:
        for repo, fix in pairs:
            row = one(repo, fix, work / "suite", work / "certs")
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    finally:
        if args.out is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print("| repository | fix | imported | gold | eval | publication | refused (grader aside) | s |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in rows:
            st = r.get("stages") or {}
            print(f"| {r['repo']} | {r['fix']} | {r['imported']} | {st.get('gold', '')} | {st.get('eval', '')} | "
                  f"{st.get('publication', '')} | {r.get('refused', '')} | {r['seconds']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
