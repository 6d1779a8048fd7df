"""``exam grade``: SWE-bench predictions graded on a suite's exams (:mod:`exam_cmd` adds it to ``exam``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from acx_oci.cli.certify_progress import CertifyProgress
from acx_oci.cli.common import emit_json, json_option, registry_options
from acx_oci.services.exams import FINISHED, Images


@click.command("grade")
@click.argument("suite", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--predictions", "predictions", required=True, type=click.Path(exists=True, dir_okay=False,
              path_type=Path), help="SWE-bench's predictions file (JSON Lines: instance_id, model_name_or_path, "
                                    "model_patch); instance_id is an exam id or an imported SWE-bench instance id.")
@click.option("--jobs", type=click.IntRange(1, 256), default=2, show_default=True, help="Predictions graded at once.")
@click.option("--env-store", default=None, metavar="oci:DIR|REGISTRY/REPO",
              help="Where exam certify keeps the environment images (default: its default store); an image not "
                   "there is built and stored.")
@click.option("--environments/--no-environments", default=True, show_default=True,
              help="Grade an exam that carries env.json in its environment image; --no-environments grades with "
                   "the host's Python (as exam certify --no-environments does).")
@click.option("--certifications", "records_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="exam certify's --out (default: its default): an exam whose current record derived its tests "
                   "(FAIL_TO_PASS, PASS_TO_PASS) is graded on exactly those, as benchmark push pins them.")
@registry_options(deadline=0)
@json_option
def exam_grade(suite: Path, predictions: Path, jobs: int, env_store: str | None, environments: bool,
               records_dir: Path | None, plain_http: bool, insecure: bool, timeout: float, as_json: bool) -> None:
    """Grade SWE-bench predictions on the exams of SUITE, as SWE-bench's run_evaluation grades them on its
    instances: each patch applied to the exam's base workspace (the import's patch rules: nothing outside
    the tree, no link, no binary), graded by the hidden tests in the grading sandbox and the exam's
    environment image, judged as attest judges a game.

    Outcomes: resolved, unresolved, empty (an empty patch, not graded), void (the submission tampered with
    its grade) and error (the patch does not apply or is refused, the environment could not be had, or the
    grade is a lane error). --json prints SWE-bench's report keys (submitted_ids, completed_ids,
    resolved_ids, unresolved_ids, error_ids, empty_patch_ids) with void_ids and instances (outcome, reason,
    failing tests per instance id). Exit 0 when every prediction was graded (none is an error), 1 otherwise,
    2 on a malformed predictions file or an instance id no exam of SUITE answers to.

    \b
    Example:
      acx-oci exam grade ./suite --predictions preds.jsonl --json > report.json
    """
    from acx_oci.services.exams import default_out, load_records
    from acx_oci.services.exams import predictions as pr

    where = records_dir or default_out()
    records = load_records(where) if (where / "records").is_dir() else {}

    shown = CertifyProgress(0, json_events=False, tty=sys.stderr.isatty())
    images = _images(env_store, environments, plain_http, insecure, timeout, shown)

    def heard(iid: str, outcome: str, done: int, of: int) -> None:
        shown.line(f"exam grade [{done}/{of}] {iid}: {outcome}")
        shown.stage(iid, FINISHED, done, of)

    try:
        doc = pr.grade_predictions(suite, predictions, jobs=jobs, images=images, progress=heard, records=records)
    finally:
        shown.stop()
    if as_json:
        emit_json(doc)
    else:
        for iid, res in doc["instances"].items():
            failing = f" (failing: {', '.join(res['failingTests'][:5])})" if res["failingTests"] else ""
            click.echo(f"{iid}: {res['outcome']}: {res['reason']}{failing}")
        click.echo(f"{doc['resolved_instances']}/{doc['submitted_instances']} resolved, "
                   f"{doc['unresolved_instances']} unresolved, {doc['void_instances']} void, "
                   f"{doc['empty_patch_instances']} empty, {doc['error_instances']} error")
    sys.exit(1 if doc["error_ids"] else 0)


def _images(env_store: str | None, environments: bool, plain_http: bool, insecure: bool, timeout: float,
            shown: CertifyProgress) -> Images:
    """Each exam's environment image, as exam certify has it (pulled by spec digest, else built); none without."""
    if not environments:
        return lambda src: None
    from acx_oci.oci import StoreOptions
    from acx_oci.services.exams import EnvImages

    return EnvImages(env_store, store_options=StoreOptions(plain_http=plain_http, insecure=insecure, timeout=timeout),
                     stages=shown.stages)
