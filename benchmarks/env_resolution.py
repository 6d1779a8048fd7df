"""``env build``'s first step on the real corpus: the lock each exam's spec resolves to, and how long it takes.

The specs are derived as ``exam import`` derives them, from the base commits of ``benchmarks/real_exams.py``'s
candidates (``--per-repo`` each), as of each fix's date, one per distinct spec. Each spec is resolved by
this tree (uv's lock, wheels fetched by hash, pip's own wheel for the install) and, with ``--old-tree DIR`` (a
checkout of an older commit, e.g. ``git worktree add /tmp/old 8c6af49``), by that tree's resolver in the same
round, in fresh processes. Prints per spec: seconds, same lock (``name==version``) or not, wheel files that
differ, and the packages under test each left out; ``--out FILE`` keeps the rows as JSON.

Run: python benchmarks/env_resolution.py --repo /work/.mirror/tkem+cachetools/repo [--repo ...] \\
         [--per-repo 3] [--old-tree /tmp/old] [--out rows.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

#: Run in a fresh process with the tree to measure on PYTHONPATH: its resolver, then pip's wheel.
ONE = """
import json, shutil, sys, tempfile, time
from pathlib import Path
from acx_oci.envimage import pyenv
inputs = pyenv.build_inputs(json.loads(sys.argv[1]))
work = Path(tempfile.mkdtemp(prefix="acx-res-"))
start = time.monotonic()
try:
    try:
        from acx_oci.envimage import lock as how
    except ImportError:
        how = pyenv  # before issue 41: pip download and the hand-written closure
    pins, left = how.resolve(inputs, work)
    how.installer(inputs, work)
    out = {"lock": sorted(f"{p.name}=={p.version}" for p in pins), "files": sorted(p.filename for p in pins),
           "leftOut": left}
except Exception as exc:
    out = {"error": str(exc)[:300]}
out["seconds"] = round(time.monotonic() - start, 2)
shutil.rmtree(work, ignore_errors=True)
print(json.dumps(out))
"""


def specs(repos: list[Path], per_repo: int) -> list[dict[str, Any]]:
    """The distinct environment specs of the candidates' base commits, each with the fixes it serves."""
    from real_exams import candidates

    from acx_oci.services.exams import gitrepo, importer

    found: dict[str, list[str]] = {}
    for repo in repos:
        try:
            cands = candidates(repo, per_repo, 60)
        except Exception as exc:  # a repository the candidate search cannot read: named, skipped
            print(f"{repo}: skipped ({exc})", file=sys.stderr)
            continue
        for c in cands:
            base = gitrepo.tree_files(gitrepo.open_repo(repo), c["parent"], [])
            changed = {ln[6:]: "" for ln in c["patch"].splitlines() if ln.startswith("+++ b/")}
            day = gitrepo.commit_date(gitrepo.open_repo(repo), c["fix"])
            spec = importer.environment(base, changed, date=day)
            keys = ("python", "requirements", "package", "resolvedAsOf", "constraints")
            key = json.dumps({k: spec[k] for k in keys if k in spec}, sort_keys=True)
            found.setdefault(key, []).append(f"{c['name']}@{c['fix'][:10]}")
    return [{"spec": json.loads(k), "fixes": v} for k, v in found.items()]


def resolve_with(tree: Path, spec: dict[str, Any]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    res = subprocess.run([sys.executable, "-c", ONE, json.dumps(spec)], capture_output=True, text=True, env=env,
                         cwd=tempfile.gettempdir(), check=False)
    try:
        return dict(json.loads(res.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {"error": (res.stderr or res.stdout)[-300:], "seconds": None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repo", action="append", type=Path, required=True)
    ap.add_argument("--per-repo", type=int, default=3)
    ap.add_argument("--old-tree", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    rows = []
    for item in specs(args.repo, args.per_repo):
        row = {**item, "new": resolve_with(ROOT, item["spec"])}
        if args.old_tree is not None:
            row["old"] = resolve_with(args.old_tree, item["spec"])
        rows.append(row)
        new, old = row["new"], row.get("old", {})
        same = "" if not old else ("same lock" if old.get("lock") == new.get("lock") else "LOCK DIFFERS")
        files = sorted(set(old.get("files", [])) ^ set(new.get("files", []))) if old else []
        print(f"{item['spec']['python']} {','.join(item['spec']['package'])}: new {new.get('seconds')} s"
              f"{', old ' + str(old.get('seconds')) + ' s' if old else ''} {same} {new.get('error', '')}"
              f"{' files differ: ' + ' '.join(files) if files else ''} leftOut new {new.get('leftOut')}"
              f"{' old ' + str(old.get('leftOut')) if old else ''}", flush=True)
    total_new = sum(r["new"].get("seconds") or 0 for r in rows)
    total_old = sum(r.get("old", {}).get("seconds") or 0 for r in rows)
    print(f"{len(rows)} specs for {sum(len(r['fixes']) for r in rows)} fixes: new {total_new:.1f} s"
          f"{f', old {total_old:.1f} s' if args.old_tree else ''}")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
