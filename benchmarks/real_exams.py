"""Exams from real upstream history: pick fix commits from real repositories, import them, certify them.

No hand work: a commit is a candidate when it has one parent, changes at least one Python source file and at
least one test file named ``test_*.py`` (by ``importer.is_test_path``), its source change is at most
``--max-lines`` lines, and its message reads like a fix (``fix``, ``bug``, ``issue``, ``#123``, ``regression``).
The newest ``--per-repo`` candidates of each repository are imported twice:

- git mode: ``exam import --repo R --base FIX^ --fix FIX``;
- SWE-bench form: an instance built from the same commit (``base_commit`` = the parent, ``patch`` = the
  source diff, ``test_patch`` = the test diff, ``FAIL_TO_PASS`` = the test functions the test diff adds,
  ``PASS_TO_PASS`` empty) — the shape SWE-bench publishes, made mechanically.

Then ``exam certify`` runs on each suite and a table is printed: repository, commit, mode, imported?,
certified?, the stage that refused and its reason, mutants killed/made when the record has them, and the time.

The repositories come from outside (the search tool's ``fetch`` brings a public repository's whole history as a
bare git directory); none is kept in this repository. Git runs on them only through
``services.exams.gitrepo`` (the repository's own config is never read).

Run: python benchmarks/real_exams.py --repo /work/.mirror/tkem+cachetools/repo [--repo ...] \\
         [--per-repo 4] [--out /tmp/real-exams] [--jobs 2] [--mode git|swebench|both]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acx_oci.services.exams import gitrepo, importer

_FIXLIKE = re.compile(r"\b(fix(e[sd])?|bug|issue|regression|crash|broken|wrong|incorrect)\b|#\d+", re.I)
_TEST_DEF = re.compile(r"^\+\s*(?:async\s+)?def (test_\w+)\s*\(", re.M)
_CLASS = re.compile(r"^[ +]class (Test\w*)\b.*:", re.M)


def _name(repo: Path) -> str:
    """owner/name from a fetched mirror's folder (``owner+name/repo``), else the folder's name."""
    folder = repo.parent.name if repo.name == "repo" else repo.name
    return folder.replace("+", "/", 1)


def _diff_lines(g: gitrepo.Repo, parent: str, fix: str, paths: list[str]) -> str:
    return gitrepo.run_git(g, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "-U3", parent, fix, "--",
                           *paths, max_bytes=8 * 1024 * 1024).decode("utf-8", "replace")


def candidates(repo: Path, per_repo: int, max_lines: int) -> list[dict[str, Any]]:
    """The newest fix-like commits of ``repo`` that an exam can be made from (see the module's docstring)."""
    g = gitrepo.open_repo(repo)
    raw = gitrepo.run_git(g, "log", "--no-show-signature", "--no-merges", "--first-parent", "--format=%H %P",
                          "-n", "3000", "HEAD").decode("ascii", "replace")
    out: list[dict[str, Any]] = []
    for line in raw.splitlines():
        parts = line.split()
        if len(parts) != 2:
            continue
        fix, parent = parts
        names = gitrepo.run_git(g, "diff", "--no-ext-diff", "--name-only", parent, fix).decode("utf-8", "replace")
        paths = names.split()
        tests = [p for p in paths if importer.is_test_path(p) and p.rsplit("/", 1)[-1].startswith("test_")
                 and p.endswith(".py")]
        sources = [p for p in paths if p.endswith(".py") and not importer.is_test_path(p)]
        if not tests or not sources:
            continue
        msg = gitrepo.commit_message(g, fix)
        if not _FIXLIKE.search(msg.splitlines()[0] if msg else ""):
            continue
        src_diff = _diff_lines(g, parent, fix, sources)
        if sum(1 for ln in src_diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")) > max_lines:
            continue
        test_diff = _diff_lines(g, parent, fix, tests)
        out.append({"repo": repo, "name": _name(repo), "fix": fix, "parent": parent, "subject": msg.splitlines()[0],
                    "patch": src_diff, "test_patch": test_diff,
                    "nonPy": [p for p in paths if p not in tests and p not in sources]})
        if len(out) >= per_repo:
            break
    return out


def _fail_to_pass(c: dict[str, Any]) -> list[str]:
    """The test functions the test diff adds, as pytest ids (``path::name``; class-nested ones unqualified)."""
    ids: list[str] = []
    for chunk in re.split(r"^diff --git ", c["test_patch"], flags=re.M)[1:]:
        path = chunk.split("\n", 1)[0].split(" b/", 1)[-1].strip()
        for m in _TEST_DEF.finditer(chunk):
            ids.append(f"{path}::{m.group(1)}")
    return ids


def _acx(*args: str | Path) -> tuple[int, dict[str, Any] | None, str]:
    proc = subprocess.run([sys.executable, "-m", "acx_oci", *map(str, args)], capture_output=True, text=True)
    try:
        doc = json.loads(proc.stdout) if proc.stdout.strip() else None
    except json.JSONDecodeError:
        doc = None
    return proc.returncode, doc, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""


def import_all(cands: list[dict[str, Any]], out: Path, mode: str) -> list[dict[str, Any]]:
    """Import each candidate into ``out/<mode>``; one row per candidate with the outcome."""
    suite = out / mode
    rows: list[dict[str, Any]] = []
    for c in cands:
        eid = importer.exam_id_for(f"{c['name'].split('/')[-1]}-{c['fix'][:10]}")
        if mode == "git":
            code, doc, err = _acx("exam", "import", "--repo", c["repo"], "--base", c["parent"], "--fix", c["fix"],
                                  "--id", eid, "-o", suite, "--json")
        else:
            clones = out / "clones"
            link = clones / c["name"].replace("/", "__")
            if not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(Path(c["repo"]).resolve())
            inst = {"instance_id": eid, "repo": c["name"], "base_commit": c["parent"], "patch": c["patch"],
                    "test_patch": c["test_patch"], "FAIL_TO_PASS": _fail_to_pass(c), "PASS_TO_PASS": [],
                    "problem_statement": c["subject"] + "\n"}
            jsonl = out / f"{eid}.jsonl"
            jsonl.write_text(json.dumps(inst) + "\n")
            code, doc, err = _acx("exam", "import", "--swebench", jsonl, "--repos", clones, "-o", suite, "--json")
        rows.append({"repo": c["name"], "commit": c["fix"][:10], "mode": mode, "exam": eid, "imported": code == 0,
                     "why": "" if code == 0 else ((doc or {}).get("message") or err)[:160]})
    return rows


def certify(out: Path, mode: str, rows: list[dict[str, Any]], jobs: int) -> float:
    """Certify ``out/<mode>``; fill each imported row's outcome; return the seconds taken."""
    suite = out / mode
    if not any(r["imported"] for r in rows):
        return 0.0
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "acx_oci", "exam", "certify", str(suite), "--out",
                           str(out / f"certs-{mode}"), "--jobs", str(jobs), "--json"], capture_output=True,
                          text=True)
    took = time.monotonic() - t0
    try:
        records = {r["exam"]: r for r in json.loads(proc.stdout).get("records", [])}
    except (json.JSONDecodeError, AttributeError):
        records = {}
    for r in rows:
        rec = records.get(r["exam"])
        if rec is None:
            continue
        r["certified"] = bool(rec.get("certified"))
        stages = rec.get("stages", {})
        bad = next((s for s in stages if s != "promotion" and not stages[s].get("ok")), None)
        if bad:
            facts = stages[bad]
            reason = facts.get("reason") or [k for k, v in facts.items() if v is False][:3]
            r["why"] = f"{bad}: {reason}"[:160]
        grader = stages.get("grader", {})
        if "mutantsMade" in grader:
            r["mutants"] = f"{grader.get('mutantsKilled')}/{grader.get('mutantsMade')}"
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--repo", action="append", type=Path, required=True, help="a git repository (repeatable)")
    ap.add_argument("--per-repo", type=int, default=4)
    ap.add_argument("--max-lines", type=int, default=60, help="most changed source lines a fix may have")
    ap.add_argument("--out", type=Path, default=Path("/tmp/real-exams"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--mode", choices=["git", "swebench", "both"], default="both")
    args = ap.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    cands = [c for repo in args.repo for c in candidates(repo, args.per_repo, args.max_lines)]
    print(f"{len(cands)} candidate fixes from {len(args.repo)} repositories", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    for mode in (["git", "swebench"] if args.mode == "both" else [args.mode]):
        mrows = import_all(cands, args.out, mode)
        secs = certify(args.out, mode, mrows, args.jobs)
        print(f"{mode}: imported {sum(r['imported'] for r in mrows)}/{len(mrows)}, certified "
              f"{sum(bool(r.get('certified')) for r in mrows)}, certify took {secs:.0f} s", file=sys.stderr)
        rows += mrows
    print("| repository | commit | mode | imported | certified | refused at / why | mutants killed |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        why = r["why"].replace("|", "/")
        print(f"| {r['repo']} | {r['commit']} | {r['mode']} | {'yes' if r['imported'] else 'no'} | "
              f"{'yes' if r.get('certified') else 'no'} | {why} | {r.get('mutants', '')} |")
    (args.out / "rows.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
