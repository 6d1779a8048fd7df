"""Exams from real upstream history: pick fix commits from real repositories, import them, certify them.

No hand work and no choice of its own (issue 45): the candidates are the product's (``acx-oci exam candidates
--fixes-only --max-source-lines N``, SWE-rebench's filter: 1 to 15 files, a test module and non-test Python
both changed, the test change adding a test or an assertion; ``--stdlib-only`` adds ``--self-contained``).
Which tests are graded is the product's business too, derived at certification as SWE-bench's validation
derives it (``services/exams/derivation.py``). The newest ``--per-repo`` candidates of each
repository are imported with the docs' commands, no flag they do not give:

- git mode: ``exam import --repo R --base FIX^ --fix FIX`` (every test of the changed test files is run on the
  base and the fix at certification; FAIL_TO_PASS and PASS_TO_PASS are graded, the record names the rest);
- (the mechanical SWE-bench form, instances whose ``FAIL_TO_PASS`` this script read off the diff, is gone:
  test ids are the product's to derive, at certification);
- ``--lite FILE``: published SWE-bench (Lite) instances as given, with their clones under ``--lite-repos``.

With ``--environments`` each exam's ``env.json`` is built with ``env build STORE:TAG --spec env.json`` (once
per spec) and certification runs with ``--env-store STORE``, as the docs say.
Then ``exam certify`` runs on each suite (the modes at once, ``--jobs`` exams each); exams whose record is a
harness lane error are certified once more. The table: repository, commit, mode, imported?, certified?, the
kind of refusal and the record's own words, mutants killed/made, and each exam's seconds; then the figures
(imported N, certified M, offline-passable P = imported and not refused for a missing module, the network or
an older Python, M/P). ``--report OUT/rows.json`` prints them again.

The repositories come from outside (the search tool's ``fetch`` brings a public repository's whole history as a
bare git directory); none is kept in this repository. Git runs on them only through
``services.exams.gitrepo`` (the repository's own config is never read).

Run: python benchmarks/real_exams.py --repo /work/.mirror/tkem+cachetools/repo [--repo ...] \\
         [--per-repo 3] [--out /tmp/real-exams] [--jobs 1] [--lite L.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acx_oci.model.exam_record import failures
from acx_oci.services.exams import candidates as cand
from acx_oci.services.exams import gitrepo, importer

_PROGRESS = re.compile(r"^exam certify \[\d+/\d+\] (\S+): .*\((?:cached|([\d.]+)s)\)$")


def _name(repo: Path) -> str:
    """owner/name from a fetched mirror's folder (``owner+name/repo``), else the folder's name."""
    folder = repo.parent.name if repo.name == "repo" else repo.name
    return folder.replace("+", "/", 1)


def _diff_lines(g: gitrepo.Repo, parent: str, fix: str, paths: list[str]) -> str:
    return gitrepo.run_git(g, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "-U3", parent, fix, "--",
                           *paths, max_bytes=8 * 1024 * 1024).decode("utf-8", "replace")


def candidates(repo: Path, per_repo: int, max_lines: int, stdlib_only: bool = False) -> list[dict[str, Any]]:
    """The product's candidates (``exam candidates --fixes-only --max-source-lines N [--self-contained]``,
    :mod:`acx_oci.services.exams.candidates`), with the diff texts the SWE-bench form is made from. Nothing is
    chosen here: the selection is the product's."""
    g = gitrepo.open_repo(repo)
    found = cand.scan(repo, limit=per_repo, fixes_only=True, max_source_lines=max_lines, self_contained=stdlib_only)
    out: list[dict[str, Any]] = []
    for c in found.candidates:
        at_fix = {t: gitrepo.run_git(g, "cat-file", "blob", f"{c.commit}:{t}").decode("utf-8", "replace")
                  for t in c.tests}
        out.append({"tests_at_fix": at_fix, "repo": repo, "name": _name(repo), "fix": c.commit, "parent": c.parent,
                    "subject": c.subject, "patch": _diff_lines(g, c.parent, c.commit, list(c.sources)),
                    "test_patch": _diff_lines(g, c.parent, c.commit, list(c.tests)), "needs": list(c.needs)})
    return out


def _acx(*args: str | Path) -> tuple[int, dict[str, Any] | None, str]:
    proc = subprocess.run([sys.executable, "-m", "acx_oci", *map(str, args)], capture_output=True, text=True)
    try:
        doc = json.loads(proc.stdout) if proc.stdout.strip() else None
    except json.JSONDecodeError:
        doc = None
    return proc.returncode, doc, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def import_all(cands: list[dict[str, Any]], out: Path, mode: str) -> list[dict[str, Any]]:
    """Import each candidate into ``out/<mode>`` with the docs' command; one row per candidate with the outcome."""
    suite = out / mode
    rows: list[dict[str, Any]] = []
    for c in cands:
        eid = importer.exam_id_for(f"{c['name'].split('/')[-1]}-{c['fix'][:10]}")
        code, doc, err = _acx("exam", "import", "--classification", "public",
                              "--repo", c["repo"], "--base", c["parent"], "--fix", c["fix"],
                              "--id", eid, "-o", suite, "--json")
        rows.append({"repo": c["name"], "commit": c["fix"][:10], "mode": mode, "exam": eid, "imported": code == 0,
                     "why": "" if code == 0 else ((doc or {}).get("message") or err)[:160]})
    return rows


def build_environments(out: Path, mode: str, rows: list[dict[str, Any]], store: str) -> None:
    """``env build STORE:TAG --spec env.json`` for each distinct spec of the mode's imported exams (the docs'
    command; certification then finds each image in ``STORE`` by its spec). A build that fails is left to
    certification, whose record names it."""
    seen: set[str] = set()
    for r in rows:
        spec = out / mode / "tasks" / r["exam"] / "env.json"
        if not r["imported"] or not spec.is_file() or spec.read_text() in seen:
            continue
        seen.add(spec.read_text())
        code, _doc, err = _acx("env", "build", f"{store}:{r['exam'].lower()[:100]}", "--spec", spec, "--json")
        print(f"env build {r['exam']}: exit {code} {err}", file=sys.stderr, flush=True)


#: ``exam certify`` grades imported exams in their environment images by default; without ``--environments``
#: here the host's Python grades (``--no-environments``), as the first table was measured.
ENV_ARGS: list[str] = ["--no-environments"]


def _run_certify(suite: Path, certs: Path, jobs: int, times: dict[str, float]) -> None:
    """One ``exam certify`` run; its progress (stderr) is echoed as it comes and each exam's seconds kept."""
    proc = subprocess.Popen([sys.executable, "-m", "acx_oci", "exam", "certify", str(suite), "--out", str(certs),
                             "--jobs", str(jobs), "--json", *ENV_ARGS],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        print(line.rstrip(), file=sys.stderr, flush=True)
        m = _PROGRESS.match(line.strip())
        if m and m.group(2):
            times[m.group(1)] = times.get(m.group(1), 0.0) + float(m.group(2))
    proc.wait()


def why_refused(rec: dict[str, Any]) -> tuple[str, str]:
    """(category, the record's own words) for a refused record: the first failing stage and its fact, and what
    kind of refusal it is — the exam's (needs a module, needs network, weak tests, base passes, reference fails)
    or the harness's (a lane error: a tool fault to fix, never the exam's)."""
    stages = rec["stages"]
    for st in stages.values():  # a skipped stage carries it: check before the failures, which skip those
        if st.get("laneError"):
            return "harness lane error", str(st.get("reason"))
    fails = [(s, f) for s, f in failures(rec) if s != "promotion"]
    if not fails:
        return "", ""
    gold, grader = stages.get("gold", {}), stages.get("grader", {})
    words = "; ".join(f"{s}: {f}" for s, f in fails[:2])
    if gold.get("environmentBuilt") is False:
        return "no environment (a requirement has no wheel)", f"gold: {gold.get('reason')}"
    if gold.get("referenceMissingModules"):
        return "needs test dependencies", f"gold: {gold.get('reason')}"
    if gold.get("referenceNeedsNetwork"):
        return "needs network", f"gold: {gold.get('reason')}"
    if re.search(r"cannot import name '\w+' from '(collections|typing|inspect|asyncio|imp)'|No module named "
                 r"'(imp|distutils|asynchat|asyncore)'", str(gold.get("referenceFirstError") or "")):
        return "needs an older Python", f"gold: {gold.get('referenceFirstError')}"
    if gold.get("referenceSkipped") and not gold.get("referenceFailing"):
        return "tests skipped here (another Python or platform)", f"gold: {gold.get('reason')}"
    if gold.get("nothingToSolve"):
        return BASE_PASSES, f"gold: {gold.get('reason')}"
    if gold.get("referencePasses") is False:
        return "reference fails its tests", f"gold: {gold.get('reason') or 'referencePasses false'}"
    if gold.get("untouchedFails") is False:
        return "weak tests (the base passes them)", words
    if grader.get("testsKillMutants") is False:
        return "weak tests (mutants survive)", str(grader.get("reason"))
    if gold.get("referenceNotLeaked") is False or not stages.get("publication", {}).get("ok", True):
        return "leak / publication finding", words
    return "other", words


def import_lite(instances: Path, repos: Path, out: Path) -> list[dict[str, Any]]:
    """Published SWE-bench (Lite) instances, as given (their base, patch, test patch and test lists), into
    ``out/lite``: one row each."""
    rows = []
    for line in instances.read_text().splitlines():
        if not line.strip():
            continue
        inst = json.loads(line)
        one = out / f"lite-{inst['instance_id']}.jsonl"
        one.write_text(line + "\n")
        code, doc, err = _acx("exam", "import", "--classification", "public",
                              "--swebench", one, "--repos", repos, "-o", out / "lite", "--json")
        rows.append({"repo": inst["repo"], "commit": inst["instance_id"], "mode": "lite", "exam": inst["instance_id"],
                     "imported": code == 0, "why": "" if code == 0 else ((doc or {}).get("message") or err)[:160]})
    return rows


def certify(out: Path, mode: str, rows: list[dict[str, Any]], jobs: int) -> float:
    """Certify ``out/<mode>``; fill each imported row's outcome from the sealed records; return the seconds.

    Records are read from ``--out``'s ``records/`` folder (stdout carries the JSON document at the end only).
    Exams whose record is a harness lane error are certified once more (they are never cached; the others
    come from the cache at once), and the row says so."""
    suite, certs = out / mode, out / f"certs-{mode}"
    if not any(r["imported"] for r in rows):
        return 0.0
    t0, times = time.monotonic(), {}  # type: ignore[var-annotated]
    _run_certify(suite, certs, jobs, times)
    records = _records(certs)
    lane = [e for e, rec in records.items() if any(st.get("laneError") for st in rec["stages"].values())]
    if lane:
        print(f"{mode}: {len(lane)} harness lane error(s): certifying again: {' '.join(lane)}", file=sys.stderr)
        _run_certify(suite, certs, jobs, times)
        records = _records(certs)
    took = time.monotonic() - t0
    for r in rows:
        rec = records.get(r["exam"])
        if rec is None:
            continue
        r["certified"] = bool(rec.get("certified"))
        if r["exam"] in times:  # a record served from the cache keeps the seconds it took
            r["seconds"] = round(times[r["exam"]])
        r["retried"] = r["exam"] in lane
        r["category"], r["why"] = ("", "") if r["certified"] else why_refused(rec)
        grader = rec["stages"].get("grader", {})
        if "mutantsMade" in grader:
            r["mutants"] = f"{grader.get('mutantsKilled')}/{grader.get('mutantsMade')}"
        if r["certified"]:  # why its two probes fail differently (issue 46): tests, an assertion, or a relaxation
            r["probes"] = grader.get("distinguishedBy") or ("relaxed" if grader.get("relaxations") else "tests")
    return took


def _records(certs: Path) -> dict[str, dict[str, Any]]:
    folder = certs / "records"
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))} if folder.is_dir() else {}


#: The refusal of a commit whose tests the base already passes: no test goes from failing to passing.
BASE_PASSES = "weak tests (the base passes them)"
#: Refusals that say the fix's tests cannot pass offline in the grader's environment as it is.
NOT_OFFLINE = ("needs test dependencies", "needs network", "needs an older Python",
               "no environment (a requirement has no wheel)")


def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Imported N, certified M, offline-passable P (imported, and not refused because the tests need a
    module the environment lacks or the network), M/P, and M/V where V leaves out the commits with no
    FAIL_TO_PASS test (SWE-bench's validation discards those), per mode."""
    out: dict[str, Any] = {}
    for mode in sorted({r["mode"] for r in rows}):
        mr = [r for r in rows if r["mode"] == mode]
        n = sum(r["imported"] for r in mr)
        m = sum(bool(r.get("certified")) for r in mr)
        p = sum(1 for r in mr if r["imported"] and r.get("category") not in NOT_OFFLINE)
        # SWE-bench's own validation keeps an instance only when a test goes from failing to passing: a commit
        # whose tests the base already passes (no FAIL_TO_PASS) is no benchmark instance there (V: the rest)
        v = p - sum(1 for r in mr if r["imported"] and r.get("category") == BASE_PASSES)
        out[mode] = {"fixes": len(mr), "imported": n, "certified": m, "offlinePassable": p,
                     "certifiedShare": round(m / p, 3) if p else None, "withFailToPass": v,
                     "certifiedShareWithFailToPass": round(m / v, 3) if v else None,
                     "toolFaults": sum(1 for r in mr if r.get("category") == "harness lane error"),
                     "probesBy": {k: sum(1 for r in mr if r.get("probes") == k)
                                  for k in ("failingTests", "failingAssertion", "relaxed")}}
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| repository | commit | mode | imported | certified | refused: kind | the record's words | "
             "mutants killed | s |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        why = (r.get("why") or "").replace("|", "/").replace("\n", " ")[:200]
        lines.append(f"| {r['repo']} | {r['commit']} | {r['mode']} | {'yes' if r['imported'] else 'no'} | "
                     f"{'yes' if r.get('certified') else 'no'} | {r.get('category', '')} | {why} | "
                     f"{r.get('mutants', '')} | {r.get('seconds', '')} |")
    return "\n".join(lines)


def table_by_fix(rows: list[dict[str, Any]]) -> str:
    """One row per fix: its git-mode and SWE-bench-form outcomes side by side (the docs' table)."""
    def cell(r: dict[str, Any] | None) -> str:
        if r is None:
            return ""
        if not r["imported"]:
            return "not imported"
        return "**certified**" if r.get("certified") else f"refused: {r.get('category') or 'other'}"

    lines = ["| repository | fix | git mode | SWE-bench form | the record's words (first refusal) | mutants killed "
             "(git / swe) | s (git / swe) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    keys = list(dict.fromkeys((r["repo"], r["commit"]) for r in rows))
    for repo, commit in keys:
        by = {r["mode"]: r for r in rows if (r["repo"], r["commit"]) == (repo, commit)}
        g, w = by.get("git"), by.get("swebench") or by.get("lite")
        why = next((r["why"] for r in (g, w) if r and r.get("why")), "")
        why = why.replace("|", "/").replace("\n", " ")[:180]
        muts = " / ".join((r or {}).get("mutants", "–") for r in (g, w))
        secs = " / ".join(str((r or {}).get("seconds", "–")) for r in (g, w))
        lines.append(f"| {repo} | {commit} | {cell(g)} | {cell(w)} | {why} | {muts} | {secs} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--repo", action="append", type=Path, default=[], help="a git repository (repeatable)")
    ap.add_argument("--report", action="append", type=Path, default=[],
                    help="print the table and figures of earlier runs' rows.json (repeatable), run nothing")
    ap.add_argument("--recertify", type=Path, default=None,
                    help="certify an earlier run's suites (OUT) again (cached records are served as they are; "
                         "drop some from OUT/certs-*/by-freeze to run them anew) and rewrite its rows.json")
    ap.add_argument("--per-repo", type=int, default=4)
    ap.add_argument("--max-lines", type=int, default=60, help="most changed source lines a fix may have")
    ap.add_argument("--out", type=Path, default=Path("/tmp/real-exams"))
    ap.add_argument("--jobs", type=int, default=1, help="exams certified at once, per mode")
    ap.add_argument("--mode", choices=["git"], default="git")
    ap.add_argument("--lite", type=Path, default=None,
                    help="a JSONL of published SWE-bench (Lite) instances to import and certify as well")
    ap.add_argument("--lite-repos", type=Path, default=None, help="their clones (owner__name folders)")
    ap.add_argument("--stdlib-only", action="store_true",
                    help="only fixes whose tests import nothing beyond pytest, the standard library and the repository")
    ap.add_argument("--environments", action="store_true",
                    help="grade each exam in the image its env.json describes (env build --spec into --env-store "
                         "before certification, as the docs say)")
    ap.add_argument("--env-store", default=None,
                    help="with --environments: the image store (default oci:OUT-env-layout)")
    args = ap.parse_args()
    store = args.env_store or f"oci:{(args.recertify or args.out).resolve()}-env-layout"
    if args.environments:
        ENV_ARGS[:] = ["--environments", "--env-store", store]
    if args.report:
        rows = [r for f in args.report for r in json.loads(f.read_text())["rows"]]
        print(json.dumps(figures(rows), indent=2))
        print(table_by_fix(rows))
        return
    if args.recertify is not None:
        doc = json.loads((args.recertify / "rows.json").read_text())
        for mode in sorted({r["mode"] for r in doc["rows"]}):
            certify(args.recertify, mode, [r for r in doc["rows"] if r["mode"] == mode], args.jobs)
        doc["figures"] = figures(doc["rows"])
        (args.recertify / "rows.json").write_text(json.dumps(doc, indent=2))
        print(json.dumps(doc["figures"], indent=2))
        return
    if not args.repo:
        ap.error("give at least one --repo (or --report)")
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    cands = [c for repo in args.repo for c in candidates(repo, args.per_repo, args.max_lines, args.stdlib_only)]
    print(f"{len(cands)} candidate fixes from {len(args.repo)} repositories", file=sys.stderr)
    modes = [args.mode]
    by_mode = {mode: import_all(cands, args.out, mode) for mode in modes}
    if args.environments:
        for mode in modes:
            build_environments(args.out, mode, by_mode[mode], store)
    if args.lite is not None:
        modes.append("lite")
        by_mode["lite"] = import_lite(args.lite, args.lite_repos or args.lite.parent, args.out)
    took: dict[str, float] = {}
    threads = [threading.Thread(target=lambda m=mode: took.__setitem__(m, certify(args.out, m, by_mode[m],
                                                                                     args.jobs)))
               for mode in modes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = [r for mode in modes for r in by_mode[mode]]
    figs = figures(rows)
    for mode in modes:
        print(f"{mode}: {figs[mode]}, certify took {took.get(mode, 0):.0f} s", file=sys.stderr)
    print(table(rows))
    (args.out / "rows.json").write_text(json.dumps({"figures": figs, "seconds": took, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
