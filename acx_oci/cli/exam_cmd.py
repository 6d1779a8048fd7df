"""``exam certify|canary scan|report``: exam certification (issue 11)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from acx_oci.cli.common import emit_json, env_source_options, json_option, registry_options, store_for
from acx_oci.cli.executor_opts import executor_options, open_from_options
from acx_oci.cli.main import main
from acx_oci.errors import UsageError
from acx_oci.files import load_json_file
from acx_oci.model import exam as mx
from acx_oci.services import exams as ex


@main.group()
def exam() -> None:
    """Exam certification: no benchmark scores anyone until its exams survive the eight stages."""


@exam.command("certify")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--jobs", type=click.IntRange(1, 256), default=None,
              help="Exams certified at once  [default: 2; with a Dask executor, the cluster's worker threads].")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where records, the summary and the canary registry go (default ~/.acx-oci/exams).")
@click.option("--patterns", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Extra publication-scan patterns: {patterns: [{name, regex, scope: all|model}]}.")
@click.option("--promote", is_flag=True,
              help="Stage 8: run the whole chain inside the suite's declared environment image (benchmark.json "
                   "environment.image) or --image, with no network; the records name the image.")
@click.option("--image", "image_ref", metavar="REF@sha256:...|sha256:...",
              help="The environment image to promote in (implies --promote; what the records then name).")
@click.option("--gold-runs", "gold_runs", type=click.IntRange(1, 20), default=ex.GOLD_RUNS, show_default=True,
              help="Runs the reference must pass (k of k) before an exam with derived controls (mutants, no "
                   "hand-made lookalike) certifies; exams with hand-made controls run it once.")
@click.option("--environments/--no-environments", default=None,
              help="Grade each exam that carries an environment spec (env.json, from exam import) inside its own "
                   "image: pulled from --env-store by spec digest, else built (env build --spec) and stored there. "
                   "On by default; --no-environments grades them with the host's Python (the records say host). "
                   "Exams without env.json are graded as always.")
@click.option("--env-store", default=None, metavar="oci:DIR|REGISTRY/REPO",
              help="Where environment images are kept by spec digest (default: an OCI layout beside the image cache).")
@env_source_options
@click.option("--allow-build/--wheels-only", "allow_build", default=True, show_default=True,
              help="Building an environment: a requirement that has only a source distribution is built inside "
                   "the sandbox; --wheels-only refuses it.")
@executor_options
@registry_options(deadline=0)
@json_option
def exam_certify(path: Path, jobs: int | None, out: Path | None, patterns: Path | None, promote: bool,
                 image_ref: str | None, gold_runs: int, environments: bool | None, env_store: str | None,
                 find_links: tuple[Path, ...], index_url: str | None, allow_build: bool, plain_http: bool,
                 insecure: bool, timeout: float, as_json: bool, **executor_opts: Any) -> None:
    """Run the contract check, gold, grader controls, attack suite, eval (the reference and controls played
    through the ROM solver), canary, publication scan, freeze and promotion on every exam under PATH (a
    suite directory or one exam directory).

    Exit 0 iff every exam is certified (every stage but promotion ok); else 1, naming each failing exam,
    stage and fact. Promotion is recorded, never gating: without an image every record says imageDigest null.
    An exam that carries env.json (exam import writes one) is graded in its own environment image, built
    or pulled by spec digest; one whose image cannot be had is refused at gold with the reason (not cached).
    Each exam's verdict is printed on stderr as it finishes (JSON lines with --json-events) and appended to
    OUT/certify-events.jsonl; on a terminal a status line shows each running exam's stage (--json-events:
    a JSON line per stage). --json prints one document at the end. With --executor dask://HOST:PORT the
    exams are certified on the cluster's workers (the canary registry and the records stay here); an exam's
    environment image is built or found here, pinned by digest, and pulled by the worker from --env-store
    (a registry the workers reach; an oci:DIR only where they see that path).

    \b
    Example:
      acx-oci exam certify testdata/bench-py --out ./certs --jobs 2
      acx-oci exam certify testdata/bench-py --out ./certs --image localhost:5000/acx/env@sha256:...
      acx-oci exam certify ./corpus --out ./certs --executor dask://127.0.0.1:8786
    """
    from acx_oci.cli.certify_progress import CertifyProgress
    from acx_oci.services.exams import carrying_specs, discover

    dirs = discover(path)
    with_specs = carrying_specs(dirs) if environments is not False and not (promote or image_ref) else []
    if environments and (promote or image_ref):
        raise UsageError("exam certify: --environments grades each exam in its own image; "
                         "not with --image or --promote")
    image = None
    if promote or image_ref:
        if executor_opts["executor"] != "local":
            raise UsageError("exam certify: --promote/--image runs on this host only; drop --executor")
        from acx_oci.envimage import prepare_image
        from acx_oci.oci import StoreOptions

        ref = image_ref or _declared_image(path)
        image = prepare_image(ref, StoreOptions(plain_http=plain_http, insecure=insecure, timeout=timeout))
    shown = CertifyProgress(len(dirs), json_events=executor_opts["json_events"], tty=sys.stderr.isatty())
    envs = None
    if with_specs:
        from acx_oci.oci import StoreOptions
        from acx_oci.services.exams import EnvImages

        envs = EnvImages(env_store, store_options=StoreOptions(plain_http=plain_http, insecure=insecure,
                                                               timeout=timeout), find_links=find_links,
                         index_url=index_url, allow_build=allow_build, stages=shown.stages)
    executor = open_from_options(executor_opts, timeout or 10.0)
    try:
        records = ex.certify_suite(path, jobs=jobs or (executor.threads() if executor else 2),
                                   out=out or ex.default_out(), patterns=patterns, image=image, progress=shown.line,
                                   gold_runs=gold_runs, executor=executor, environments=envs, stages=shown.stages)
    finally:
        shown.stop()
        if executor is not None:
            executor.close()
    bad = [(r.exam, stage, fact) for r in records for stage, fact in r.failures()]
    if as_json:
        emit_json({"certified": not bad, "records": [r.to_json() for r in records]})
    else:
        for r in records:
            tag = "certified" + (" (impossible: canary)" if r.impossible else "") if r.certified else "REFUSED"
            click.echo(f"{r.exam}: {tag} freeze {r.freeze_hash}")
        click.echo(f"{sum(r.certified for r in records)}/{len(records)} exams certified")
    for exam_id, stage, fact in bad:
        click.echo(f"{exam_id}: {stage}: {fact}", err=True)
    sys.exit(1 if bad else 0)


def _declared_image(path: Path) -> str:
    """The suite's ``benchmark.json`` environment image, for ``--promote`` without ``--image``."""
    suite = path / "benchmark.json" if (path / "benchmark.json").is_file() else path.parent.parent / "benchmark.json"
    doc = load_json_file(suite, "benchmark.json") if suite.is_file() else {}
    image = ((doc or {}).get("environment") or {}).get("image") if isinstance(doc, dict) else None
    if not isinstance(image, str):
        raise UsageError(f"exam certify --promote: {path} declares no environment image; give --image REF")
    return image


@exam.command("import")
@click.option("--repo", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="A git repository holding the fix (read with git plumbing only, as untrusted input).")
@click.option("--base", metavar="COMMIT", help="The commit the model starts from (the tree it is given).")
@click.option("--fix", metavar="COMMIT", help="The upstream fix: its source change is the reference.")
@click.option("--tests", "tests", multiple=True, metavar="PATHS|PATH::TEST",
              help="Hidden tests (paths at the fix, comma-separated or repeated); default: the test files the fix "
                   "changes. PATH::TEST ids (tests/test_x.py::TestCls::test_y) grade exactly the tests named, as "
                   "SWE-bench's FAIL_TO_PASS/PASS_TO_PASS do; their files are the hidden test files.")
@click.option("--lookalike", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A near miss a competent engineer would write: a patch against the base.")
@click.option("--incomplete", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="An incomplete fix (a patch against the base); default: the fix without its last source hunk.")
@click.option("--prompt", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="The task statement the model gets (default: the fix's commit message).")
@click.option("--id", "exam_id", default=None, help="The exam id (default: the repository's name and the fix).")
@click.option("--swebench", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="SWE-bench instances (JSON Lines) to import instead, against the clones in --repos.")
@click.option("--repos", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="With --swebench: where the clones are (owner__name, owner/name or name).")
@click.option("--classification", metavar="public|private|customer:NAME", default=None,
              help="The exams' classification, as you state it (private and customer exams are always held out). "
                   "Required: the handling rules are stated up front, never decided later.")
@click.option("-o", "--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The suite the exams are written into (made if absent; an existing suite gains them).")
@click.option("--requirements", "requirements", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Requirement lines for the exams' environment (env.json) instead of those derived "
                                 "from the repository's pyproject.toml, setup.py/cfg, requirements files and tox.ini.")
@click.option("--python", "python", default=None, metavar="X.Y",
              help="The environment's Python instead of the derived one (3.9, 3.11 or 3.13).")
@json_option
def exam_import(repo: Path | None, base: str | None, fix: str | None, tests: tuple[str, ...],
                lookalike: Path | None, incomplete: Path | None, prompt: Path | None, exam_id: str | None,
                swebench: Path | None, repos: Path | None, classification: str | None, out: Path,
                requirements: Path | None, python: str | None, as_json: bool) -> None:
    """Make exams from a repository's own fix (--repo --base --fix) or from SWE-bench instances
    (--swebench --repos), in exam form under OUT; then certify them like any exam.

    The model gets the base tree without the hidden tests; the fix's source change is the reference and its
    parent commit is recorded (source.json). Exit 0 when every exam was written; 2 on bad input (nothing is
    written then).

    \b
    Example:
      acx-oci exam import --repo ./calc --base v1.2 --fix 3f2c9e1 --lookalike near-miss.patch \\
          --classification public -o ./suite
      acx-oci exam import --swebench instances.jsonl --repos ./clones --classification public -o ./suite
      acx-oci exam certify ./suite --out ./certs
    """
    from acx_oci.files import read_bytes
    from acx_oci.services.exams import importer
    from acx_oci.services.exams import swebench as swe

    stated = importer.parse_classification(classification)
    reqs = read_bytes(requirements, "requirements", 1 << 20).decode("utf-8", "replace") if requirements else None
    if swebench is not None:
        if repo or base or fix or tests or lookalike or incomplete or prompt or exam_id or repos is None:
            raise UsageError("exam import --swebench FILE takes --repos DIR, -o DIR, --classification, --requirements "
                             "and --python only")
        parts = swe.swebench_parts(swebench, repos, requirements=reqs, python=python)
    else:
        if repo is None or base is None or fix is None:
            raise UsageError("exam import: give --repo PATH --base COMMIT --fix COMMIT, or --swebench FILE --repos DIR")

        def patch(p: Path | None) -> bytes | None:
            return read_bytes(p, "patch", importer.MAX_PATCH_BYTES) if p is not None else None

        parts = [importer.from_repo(repo, base, fix, tests=list(tests) or None, exam_id=exam_id,
                                    prompt=read_bytes(prompt, "prompt", 1 << 20).decode("utf-8", "replace")
                                    if prompt else None,
                                    incomplete_patch=patch(incomplete), lookalike_patch=patch(lookalike),
                                    requirements=reqs, python=python)]
    exams = importer.write_all(parts, out, stated)
    if as_json:
        emit_json({"suite": str(out), "exams": exams})
        return
    for e in exams:
        click.echo(f"{e['exam']}: {e['dir']} (parent {e['parentCommit']}, hidden {', '.join(e['hiddenTests'])}, "
                   f"classification {json.dumps(e['classification'], sort_keys=True)})")
        for note in e["notes"]:
            click.echo(f"  {note}")
        if e.get("environment"):
            env = e["environment"]
            click.echo(f"  environment: python {env['python']}, {len(env['requirements'])} requirement(s) from "
                       f"{', '.join(env['sources']) or 'none found'} (env.json)")
    click.echo(f"next: acx-oci exam certify {out} --out CERTS")


@exam.group("canary")
def canary() -> None:
    """Canary markers: one per hidden test file, registered host-side."""


@canary.command("scan")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--suite", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Read the markers from this suite's hidden tests.")
@click.option("--registry", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A canary registry (default: the one under ~/.acx-oci/exams).")
@json_option
def canary_scan(files: tuple[Path, ...], suite: Path | None, registry: Path | None, as_json: bool) -> None:
    """Name the exam and file each leaked marker in FILES came from. Exit 0 when one was found, 1 when none.

    \b
    Example:
      acx-oci exam canary scan ./model-output/*.txt --suite ./bench-py
    """
    if suite is not None and registry is not None:
        raise UsageError("exam canary scan: give --suite or --registry, not both")
    if suite is not None:
        reg = ex.suite_canaries(suite)
    else:
        path = registry or ex.default_out() / ex.REGISTRY_FILE
        if not path.is_file():
            raise UsageError(f"exam canary scan: no canary registry at {path}; pass --suite or --registry")
        reg = ex.load_registry(path)
    hits = ex.scan_for_canaries(files, reg)
    found = [h for h in hits if h["known"]]
    if as_json:
        emit_json({"found": bool(found), "hits": hits})
    else:
        for h in hits:
            where = f"exam {h['exam']} file {h['examFile']}" if h["known"] else "not in the registry"
            click.echo(f"{h['file']}: {h['marker']} -> {where}")
        if not found:
            click.echo("no registered canary marker found")
    sys.exit(0 if found else 1)


@exam.command("report")
@click.option("--records", "records_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="The --out directory of exam certify (the suite summary, regenerated from its sealed records).")
@click.option("--runs", "runs_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="An attest -o folder, or a folder of them: rollout cells from their game records.")
@click.option("--attestations", "cartridges", multiple=True, metavar="CARTRIDGE_REF",
              help="A cartridge in a registry: its attestations' game records are runs too. Repeatable.")
@click.option("--rollouts", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="JSON list of {exam, agent, outcome}, added to the cells of --runs (older reports).")
@registry_options
@json_option
def exam_report(records_dir: Path | None, runs_dir: Path | None, cartridges: tuple[str, ...], rollouts: Path | None,
                plain_http: bool, insecure: bool, timeout: float, as_json: bool) -> None:
    """The suite summary (--records) and rollout cells per (exam, agent) from attest runs (--runs).

    Cells come from the runs' own game records (each record's bytes checked against the run's result.json, or
    by digest for a registry's attestations);
    an exam is named by its task commitment, never its id. Below 10 counted rollouts a cell shows raw counts
    only, and agents are ranked only when every cell has a rate. Exit 1 when a stored summary.json disagrees
    or a record does not verify.

    \b
    Example:
      acx-oci exam report --records ./certs --runs ./attest-runs
    """
    from acx_oci.oci import parse_reference
    from acx_oci.services.tools import runs as exam_runs

    if records_dir is None and runs_dir is None and not cartridges and rollouts is None:
        raise UsageError("exam report: give --records, --runs, --attestations or --rollouts")
    summary = ex.report(records_dir) if records_dir else None
    rolls, reviews = exam_runs.rollouts(runs_dir) if runs_dir else ([], [])
    for ref in cartridges:
        more, seen = exam_runs.cells_input(exam_runs.registry_runs(
            store_for(ref, plain_http, insecure, timeout), parse_reference(ref).target))
        rolls, reviews = rolls + more, reviews + seen
    if rollouts:
        rolls += list(load_json_file(rollouts, "rollouts"))
    cells = mx.rollout_cells(rolls)
    ranked, withheld = mx.ranking(cells)
    if as_json:
        emit_json({"summary": summary, "cells": cells, "ranking": ranked, "rankingWithheld": withheld,
                   "harnessReview": reviews})
        return
    _print_report(summary, cells, ranked, withheld, reviews)


def _print_report(summary: dict[str, Any] | None, cells: list[dict[str, Any]], ranked: list[dict[str, Any]] | None,
                  withheld: str | None, reviews: list[dict[str, Any]]) -> None:
    if summary is not None:
        click.echo(f"{summary['certified']}/{summary['exams']} exams certified ({summary['impossible']} impossible)")
        for stage, c in summary["stages"].items():
            click.echo(f"  {stage:<12} ok {c['ok']:>4}  failed {c['failed']:>4}")
    for cell in cells:
        counts = " ".join(f"{k}={v}" for k, v in sorted(cell["counts"].items()))
        rate = f"passRate {cell['passRate']:.2f}" if "passRate" in cell else "raw counts only (< 10 rollouts)"
        click.echo(f"  {_short(cell['exam'])} x {cell['agent']}: {counts} ({rate})")
    if cells:
        click.echo(f"ranking {withheld}" if ranked is None else
                   "ranking: " + ", ".join(f"{r['agent']} {r['passRate']:.2f}" for r in ranked))
    for rv in reviews:
        for f in rv["findings"]:
            click.echo(f"  harness review {rv['agent']} ({rv['run']}): {f['rule']} [{f['classification']}] "
                       f"games {','.join(map(str, f['games']))}: {f['detail']}")


def _short(exam: str) -> str:
    """A task commitment shortened for a terminal (JSON keeps it whole)."""
    return exam[:len("hmac-sha256:") + 16] if exam.startswith("hmac-sha256:") else exam


@exam.command("verify")
@click.argument("bench_ref")
@click.option("--trust", "trust_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Trust file: DID documents for did:web certifiers, and benchmarks[].certifiedBy to require.")
@registry_options
@json_option
def exam_verify(bench_ref: str, trust_path: Path | None, plain_http: bool, insecure: bool, timeout: float,
                as_json: bool) -> None:
    """Audit a benchmark's signed exam certification (a referrer of its manifest).

    Verifies the certifier's signature over the summary, that it names this
    benchmark manifest and suite digest, and (with --trust) that the certifier
    is one the trust file requires for this benchmark. Exit 0 verified, 1 not.

    \b
    Example:
      acx-oci exam verify registry.example/acme/bench-py:2026.07.1 --trust trust.yaml
    """
    from acx_oci.errors import VerificationError
    from acx_oci.model import benchmark as bmodel
    from acx_oci.oci import parse_reference
    from acx_oci.services.artifacts import benchmark as bm
    from acx_oci.services.artifacts import certification as cert
    from acx_oci.trust import load_trust

    trust = load_trust(trust_path) if trust_path else None
    store = store_for(bench_ref, plain_http, insecure, timeout)
    remote = bm.fetch(store, parse_reference(bench_ref).target)
    state = remote.manifest.annotations.get(bmodel.ANN_CERTIFICATION, "not-exam-form")
    bench_digest = str(remote.descriptor["benchmarkDigest"])
    required: tuple[str, ...] = ()
    if trust is not None:
        accepted = trust.benchmark(remote.id, remote.version)
        required = accepted.certified_by if accepted else ()
    # pinned certifiers: a certification by one of them among all referrers, not whichever is listed first
    found, problems = cert.find_certification(store, remote.manifest.digest, bench_digest, None, trust,
                                              certifiers=required or None)
    trusted = found is not None
    if as_json:
        emit_json({"benchmark": f"{remote.id}@{remote.version}", "manifestDigest": remote.manifest.digest,
                   "examCertification": state, "verified": trusted,
                   "certification": {"digest": found.digest, "certifier": found.certifier,
                                     "summary": found.predicate.get("summary"),
                                     "exams": len(found.predicate.get("exams") or {})} if found else None,
                   "requiredCertifiers": list(required), "problems": problems})
    else:
        click.echo(f"benchmark {remote.id}@{remote.version} ({remote.manifest.digest}): {state}")
        if found is not None:
            exams = found.predicate.get("exams") or {}
            click.echo(f"  certification {found.digest}")
            click.echo(f"  certified by {found.certifier}: {sum(e['certified'] for e in exams.values())}/"
                       f"{len(exams)} exams certified")
        for problem in problems:
            click.echo(f"  rejected: {problem}")
        if found is None and required:
            click.echo(f"  no verifying certification by a certifier the trust file requires ({', '.join(required)})")
    if not trusted:
        if as_json:
            raise SystemExit(1)
        raise VerificationError(f"exam verify: {bench_ref} has no trusted, verifying exam certification")


from acx_oci.cli.grade_cmd import exam_grade  # noqa: E402  (its own module: this one is near its size cap)
from acx_oci.cli.harvest_cmd import exam_candidates, exam_harvest  # noqa: E402

exam.add_command(exam_grade)
exam.add_command(exam_candidates)
exam.add_command(exam_harvest)
