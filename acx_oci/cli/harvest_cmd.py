"""``exam candidates`` and ``exam harvest``: exams from a repository's history, chosen by the product (issue 43)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from acx_oci.cli.common import emit_json, env_source_options, json_option, registry_options
from acx_oci.cli.executor_opts import executor_options, open_from_options
from acx_oci.errors import UsageError
from acx_oci.oci import StoreOptions
from acx_oci.services.exams import candidates as cand

if TYPE_CHECKING:
    from acx_oci.services.exams import Grading


def _window(f: Any) -> Any:
    """The options that choose the commits, shared by ``candidates`` and ``harvest``."""
    for opt in reversed([
        click.option("--repo", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
                     help="A git repository (read with git plumbing only, as untrusted input)."),
        click.option("--since", metavar="DATE", default=None,
                     help="Only commits made at or after DATE (YYYY-MM-DD or ISO 8601; UTC unless it says): a "
                          "model's training cutoff, for a post-cutoff suite."),
        click.option("--until", metavar="DATE", default=None, help="Only commits made before DATE."),
        click.option("--max", "limit", type=click.IntRange(1, 10000), default=20, show_default=True,
                     help="Candidates at most (the newest first)."),
        click.option("--fixes-only", is_flag=True,
                     help="Only commits whose subject reads like a fix (fix, bug, issue, regression, #123, ...)."),
        click.option("--max-source-lines", type=click.IntRange(1, 100000), default=None,
                     help="Only commits whose non-test Python change is at most this many lines."),
        click.option("--self-contained", is_flag=True,
                     help="Only commits whose tests import nothing beyond pytest, the standard library and the "
                          "repository (no test dependency to install)."),
    ]):
        f = opt(f)
    return f


def _scan(repo: Path, since: str | None, until: str | None, limit: int, fixes_only: bool,
          max_source_lines: int | None, self_contained: bool) -> cand.CandidateScan:
    start = cand.parse_date(since, "--since") if since else None
    end = cand.parse_date(until, "--until") if until else None
    if start and end and end <= start:
        raise UsageError(f"--until {until} is not after --since {since}")
    found = cand.scan(repo, since=start, until=end, limit=limit, fixes_only=fixes_only,
                      max_source_lines=max_source_lines, self_contained=self_contained, progress=_say)
    if found.capped:
        _say(f"exam candidates: the walk stopped at {cand.MAX_SCANNED} commits; narrow it with --since/--until")
    return found


@click.command("candidates")
@_window
@json_option
def exam_candidates(repo: Path, since: str | None, until: str | None, limit: int, fixes_only: bool,
                    max_source_lines: int | None, self_contained: bool, as_json: bool) -> None:
    """List the commits of REPO's history an exam can be made from, newest first (nothing is imported).

    A candidate is a commit on the first-parent line (not a merge, or a pull request's merge), changing 1 to
    15 files, among them a test module and a non-test Python file, whose test change adds a test or an
    assertion (SWE-rebench's filter). Every commit left out is counted by its reason. Each candidate's
    `needs` are the modules its tests import beyond pytest, the standard library and the repository.

    \b
    Example:
      acx-oci exam candidates --repo ./rich --since 2025-01-01 --max 10
      acx-oci exam import --repo ./rich --base COMMIT^ --fix COMMIT -o ./suite --classification public
    """
    found = _scan(repo, since, until, limit, fixes_only, max_source_lines, self_contained)
    if as_json:
        emit_json(found.json())
        return
    for c in found.candidates:
        needs = f"  needs {', '.join(c.needs)}" if c.needs else ""
        click.echo(f"{c.commit[:12]} {c.date} {c.files} files  {cand.printable(c.subject)[:70]}{needs}")
    left = ", ".join(f"{n} {why}" for why, n in sorted(found.left_out.items(), key=lambda kv: -kv[1]))
    click.echo(f"{len(found.candidates)} candidate(s) of {found.scanned} commit(s) read" +
               (f"; left out: {left}" if left else ""))


@click.command("harvest")
@_window
@click.option("-o", "suite", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The suite the certified exams are written into (made if absent).")
@click.option("--out", "certs", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Where the certification records, the harvest's state (harvest.json) and the refused exams "
                   "(harvest/refused/) go: give it again to pick up where a run left.")
@click.option("--classification", required=True, metavar="public|private|customer:NAME",
              help="The exams' classification, stated up front (private and customer exams are held out).")
@click.option("--env-store", default=None, metavar="oci:DIR|REGISTRY/REPO",
              help="Where environment images are kept by spec digest (default: an OCI layout beside the image "
                   "cache); give benchmark push the same.")
@click.option("--environments/--no-environments", default=True, show_default=True,
              help="Grade each exam in its own environment image (as exam certify); --no-environments grades "
                   "with the host's Python (the records say host).")
@click.option("--jobs", type=click.IntRange(1, 256), default=None,
              help="Exams certified at once  [default: 2; with a Dask executor, the cluster's worker threads].")
@env_source_options
@click.option("--python", "python", default=None, metavar="X.Y",
              help="Every exam's environment Python instead of the derived one (3.9, 3.11 or 3.13): for a "
                   "project whose newest tests need 3.13 (attrs: 'requires Python 3.13+', skipped on 3.11).")
@executor_options
@registry_options(deadline=0)
@json_option
def exam_harvest(repo: Path, since: str | None, until: str | None, limit: int, fixes_only: bool,
                 max_source_lines: int | None, self_contained: bool, suite: Path, certs: Path, classification: str,
                 env_store: str | None, environments: bool, jobs: int | None, find_links: tuple[Path, ...],
                 index_url: str | None, python: str | None, plain_http: bool, insecure: bool, timeout: float,
                 as_json: bool, **executor_opts: Any) -> None:
    """Certified exams from REPO's history in one command: pick the candidates (as `exam candidates`), import
    each (as `exam import --repo REPO --base COMMIT^ --fix COMMIT`), certify the suite in each exam's own
    environment image (as `exam certify --env-store STORE`, FAIL_TO_PASS derived), and say where each
    candidate dropped.

    The funnel: candidates -> imported -> environment (its image built, or pulled by spec) -> referencePasses
    (the fix passes its tests) -> failToPass (a test fails before the fix) -> certified. An exam refused with
    a verdict is moved to CERTS/harvest/refused/ (its record in CERTS/records/), so OUT holds what `benchmark
    push OUT REF --certifications CERTS --env-store STORE` takes. Interrupted (Ctrl-C, SIGTERM), it prints
    the funnel so far; run it again with the same --out and it picks up where it left.

    With --executor dask://HOST:PORT the exams are certified on the cluster's workers, each pulling its exam's
    image from --env-store by digest (a registry the workers reach).

    Exit 0 when the run finished and certified at least one exam; 1 when it certified none; 130/143 when
    interrupted.

    \b
    Example:
      acx-oci exam harvest --repo ./rich --since 2025-06-01 --max 20 -o ./suite --out ./certs \\
          --classification public --env-store oci:./env-images
      acx-oci benchmark push ./suite oci:./bench:1 --seal-to verifier.did.json --certifications ./certs \\
          --env-store oci:./env-images --certifier-key certifier.key
    """
    from acx_oci.envimage import PYTHONS
    from acx_oci.services.exams import default_store, importer
    from acx_oci.services.exams import harvest as hv

    stated = importer.parse_classification(classification)
    if python is not None and python not in PYTHONS:  # said once, not as every candidate's refusal
        raise UsageError(f"--python {python}: expected one of {', '.join(PYTHONS)} (a Debian suite's python3)")
    if certs.resolve() == suite.resolve() or certs.resolve().is_relative_to(suite.resolve()):
        raise UsageError(f"exam harvest: --out {certs} is inside the suite {suite}; records never go into a suite")
    executor = open_from_options(executor_opts, timeout or 10.0)  # asked first: a dead scheduler, in seconds
    try:
        with hv.locked(certs):
            grading = hv.Grading((env_store or default_store()) if environments else None,
                                 executor.threads() if executor is not None and jobs is None else (jobs or 2),
                                 find_links, index_url, StoreOptions(plain_http=plain_http, insecure=insecure,
                                                                     timeout=timeout), executor)
            _harvest(repo, _scan(repo, since, until, limit, fixes_only, max_source_lines, self_contained), suite,
                     certs, stated, {"repository": str(repo.resolve()), "since": since, "until": until,
                                     "python": python}, grading, as_json, bool(executor_opts["json_events"]))
    finally:
        if executor is not None:
            executor.close()


def _harvest(repo: Path, found: cand.CandidateScan, suite: Path, certs: Path, stated: dict[str, Any],
             meta: dict[str, Any], grading: Grading, as_json: bool, json_events: bool) -> None:
    from acx_oci.cli.certify_progress import CertifyProgress
    from acx_oci.services.exams import harvest as hv

    _say(f"exam harvest: {len(found.candidates)} candidate(s) of {found.scanned} commit(s) read")
    h = hv.Harvest(repo, suite, certs, stated, hv.load_state(certs), meta, python=meta.get("python"))
    doc = hv.run(h, found.candidates, grading, _say,
                 lambda n: CertifyProgress(n, json_events=json_events, tty=sys.stderr.isatty()),
                 lambda so_far: _show(so_far, as_json))
    _show(doc, as_json)
    sys.exit(0 if doc["funnel"]["certified"] else 1)


def _say(line: str) -> None:
    click.echo(line, err=True)


def _show(doc: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(doc)
        return
    for c in doc["candidates"]:
        why = f": {c['reason'][:150]}" if c["reason"] and not c["certified"] else ""
        click.echo(f"{c['commit'][:12]} {c['exam']}: {c['stage']}{cand.printable(why)}")
    f = doc["funnel"]
    click.echo(" -> ".join(f"{k} {v}" for k, v in f.items()))
    if doc["otherExamsRefused"]:
        click.echo(f"the suite's other exams, refused (not this harvest's, left in place): "
                   f"{', '.join(doc['otherExamsRefused'][:10])}")
    elif f["certified"]:
        store = f" --env-store {doc['envStore']}" if doc["envStore"] else ""
        click.echo(f"next: acx-oci benchmark push {doc['suite']} REF --seal-to VERIFIER.did.json --certifications "
                   f"{doc['certifications']}{store}")
