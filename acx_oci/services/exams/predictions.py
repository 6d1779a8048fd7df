"""``exam grade --predictions``: SWE-bench's predictions file graded on a suite's exams, with SWE-bench's report.

A prediction is ``{"instance_id", "model_name_or_path", "model_patch"}`` (SWE-bench's format); its instance is
an exam of the suite, named by the exam's id or, for an exam imported from a SWE-bench instance, that
instance's id. Each patch is applied to the exam's base workspace by the import's own patch code
(:func:`acx_oci.services.exams.importer.apply_patch`: nothing outside the tree, no link, no binary), the
result graded by the same sandboxed grader ``attest`` uses, in the exam's environment image (the one
``exam certify`` built or pulled, by spec digest), and judged by the same rule (:func:`game_outcome`).

The report keeps SWE-bench's keys (``submitted_ids``, ``completed_ids``, ``resolved_ids``,
``unresolved_ids``, ``error_ids``, ``empty_patch_ids`` and their counts, ``schema_version`` 2) and adds
``void_ids`` (the in-process tamper checks fired, :mod:`acx_oci.sandbox.tamper`: graded, never a resolve)
and ``instances`` (per instance: outcome, reason, failing tests, how it was graded). An empty patch is never
graded (SWE-bench's rule); a patch that does not apply, is refused, or whose grade is a lane error is an error.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acx_oci.errors import AcxError, EnvironmentRefused, UsageError
from acx_oci.files import read_bytes
from acx_oci.jsonio import parse_json
from acx_oci.model import CERTIFIED_PASS, MODEL_FAIL, CertificationRecord
from acx_oci.sandbox import SandboxSpec, game_outcome, grade, tree_digest, write_files
from acx_oci.services.exams import derivation
from acx_oci.services.exams.diagnosis import short_ids
from acx_oci.services.exams.importer import MAX_PATCH_BYTES, apply_patch
from acx_oci.services.exams.source import ExamSource, discover, exam_freeze_hash, load_exam

MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_PREDICTIONS = 100_000
GRADE_SECONDS = 300.0
KEYS = ("instance_id", "model_name_or_path", "model_patch")
RESOLVED, UNRESOLVED, EMPTY, ERROR, VOID = "resolved", "unresolved", "empty", "error", "void"
#: Game outcomes that are a grade of the submission; any other (lane error, invalid) is no grade: an error.
_GRADED = {CERTIFIED_PASS: RESOLVED, MODEL_FAIL: UNRESOLVED}
#: The environment image of an exam (None: the host's Python grades it).
Images = Callable[[ExamSource], tuple[Path, str] | None]
#: Hears each instance as it finishes: (instance id, outcome, done, of).
Progress = Callable[[str, str, int, int], None]


@dataclass(frozen=True)
class Prediction:
    """One line of a predictions file."""

    instance_id: str
    model: str
    patch: str


def _line_error(path: Path, n: int, found: str) -> UsageError:
    return UsageError(f"{path}:{n}: expected a JSON object with string instance_id, model_name_or_path and "
                      f"model_patch (SWE-bench's prediction); found {found}")


def read_predictions(path: Path) -> list[Prediction]:
    """The predictions of a JSON Lines file, bounded (file size, lines, patch size); a malformed line, a patch
    over :data:`MAX_PATCH_BYTES` or an instance predicted twice is one UsageError naming the line."""
    raw = read_bytes(path, "predictions", MAX_FILE_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: predictions are not UTF-8 text") from None
    lines = text.splitlines()
    if len(lines) > MAX_PREDICTIONS:
        raise UsageError(f"{path}: {len(lines)} lines, at most {MAX_PREDICTIONS} predictions")
    out: list[Prediction] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = parse_json(line, f"{path}:{n}")
        except AcxError:
            raise _line_error(path, n, "a line that is not JSON") from None
        if not isinstance(doc, dict):
            raise _line_error(path, n, f"a JSON {type(doc).__name__}")
        bad = [k for k in KEYS if not isinstance(doc.get(k), str) and not (k == "model_patch" and doc.get(k) is None)]
        if bad:
            raise _line_error(path, n, f"{bad[0]} {'missing' if bad[0] not in doc else 'not a string'}")
        iid, patch = str(doc["instance_id"]), str(doc.get("model_patch") or "")
        if len(patch.encode("utf-8")) > MAX_PATCH_BYTES:
            raise UsageError(f"{path}:{n}: model_patch of {iid[:80]!r} over {MAX_PATCH_BYTES} bytes")
        if iid in seen:
            raise UsageError(f"{path}:{n}: instance {iid[:80]!r} predicted twice (first on line {seen[iid]})")
        seen[iid] = n
        out.append(Prediction(iid, str(doc["model_name_or_path"]), patch))
    return out


def index_exams(suite: Path) -> dict[str, ExamSource]:
    """The suite's exams by the names a prediction may use: the exam id and a SWE-bench instance id."""
    found: dict[str, ExamSource] = {}
    for src in (load_exam(d) for d in discover(suite)):
        found[src.exam_id] = src
        iid = (src.source or {}).get("instanceId")
        if isinstance(iid, str) and iid:
            found.setdefault(iid, src)
    return found


def _result(outcome: str, reason: str, failing: list[str] | None = None,
            facts: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"outcome": outcome, "reason": reason, "failingTests": failing or [], **(facts or {})}


def graded_files(src: ExamSource, record: CertificationRecord | None) -> tuple[dict[str, str], str]:
    """The exam's grader files and which tests they grade: the ids its certification derived (FAIL_TO_PASS and
    PASS_TO_PASS, as ``benchmark push`` pins them) when a record of the exam as it is now names them, else the
    exam's own (explicit ids, or every hidden test of an exam never certified)."""
    files = src.grader_files()
    if derivation.explicit_ids(files) is not None:
        return files, "the exam's ids"
    freeze = record.freeze_hash if record is not None else None
    ids = derivation.derived_ids(record) if freeze == exam_freeze_hash(src) else None
    if ids is None:
        return files, "every hidden test (no current certification record derives ids)"
    return derivation.with_ids(files, ids), "the ids its certification derived"


def grade_prediction(src: ExamSource, pred: Prediction, image: tuple[Path, str] | None,
                     record: CertificationRecord | None = None) -> dict[str, Any]:
    """One prediction: applied to the exam's base workspace, graded in the sandbox, judged as ``attest`` judges."""
    if not pred.patch.strip():
        return _result(EMPTY, "empty patch: not graded")
    try:
        tree = apply_patch(src.workspace, pred.patch.encode("utf-8"), f"prediction {pred.instance_id}")
    except AcxError as exc:
        return _result(ERROR, f"patch refused: {exc}")
    work = Path(tempfile.mkdtemp(prefix="acx-predict-"))
    try:
        grader, graded_tests = graded_files(src, record)
        for name, files in (("tests", grader), ("start", src.workspace), ("sub", tree)):
            (work / name).mkdir()
            write_files(work / name, files)
        start, submitted = tree_digest(work / "start"), tree_digest(work / "sub")
        spec = SandboxSpec(rootfs=image[0] if image else None, time_seconds=GRADE_SECONDS, memory_mib=2048, pids=256)
        graded = grade(work / "sub", work / "tests", spec=spec, time_seconds=GRADE_SECONDS)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    judged = game_outcome(graded, submitted, start)
    failing = short_ids(graded.failing())
    facts = {"gameOutcome": judged.outcome, "tests": graded.counts(), "graded": graded_tests,
             "grading": graded.how()}
    if judged.tampered:  # the tamper checks fired (grader_tampering): graded, void, never a resolve
        return _result(VOID, judged.detail, failing, facts)
    if judged.outcome in _GRADED:
        return _result(_GRADED[judged.outcome], judged.detail, failing, facts)
    return _result(ERROR, judged.detail, failing, facts)


def report(preds: list[Prediction], results: dict[str, dict[str, Any]], total: int) -> dict[str, Any]:
    """SWE-bench's report (its keys, schema_version 2) plus ``void_ids`` and ``instances``."""
    def ids(outcome: str) -> list[str]:
        return sorted(i for i, r in results.items() if r["outcome"] == outcome)

    completed = sorted(i for i, r in results.items() if r["outcome"] in (RESOLVED, UNRESOLVED, VOID))
    doc: dict[str, Any] = {"total_instances": total, "submitted_instances": len(preds),
                           "completed_instances": len(completed), "resolved_instances": len(ids(RESOLVED)),
                           "unresolved_instances": len(ids(UNRESOLVED)), "empty_patch_instances": len(ids(EMPTY)),
                           "error_instances": len(ids(ERROR)), "void_instances": len(ids(VOID)),
                           "submitted_ids": sorted(p.instance_id for p in preds), "completed_ids": completed,
                           "resolved_ids": ids(RESOLVED), "unresolved_ids": ids(UNRESOLVED),
                           "empty_patch_ids": ids(EMPTY), "error_ids": ids(ERROR), "void_ids": ids(VOID),
                           "instances": {i: results[i] for i in sorted(results)}, "schema_version": 2}
    return doc


def grade_predictions(suite: Path, predictions: Path, *, jobs: int, images: Images,
                      progress: Progress | None = None,
                      records: Mapping[str, CertificationRecord] | None = None) -> dict[str, Any]:
    """Grade every prediction of the file on the suite's exams, ``jobs`` at a time; the report.

    An instance id no exam answers to is refused before anything is graded (UsageError, one line)."""
    preds = read_predictions(predictions)
    exams = index_exams(suite)
    unknown = [p.instance_id for p in preds if p.instance_id not in exams]
    if unknown:
        raise UsageError(f"{predictions}: instance {unknown[0][:80]!r} is no exam of {suite} (by exam id or SWE-bench "
                         f"instance id){f', nor are {len(unknown) - 1} more' if len(unknown) > 1 else ''}")
    results: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()

    stop = threading.Event()  # set by an interrupt: no prediction starts after it, in any worker

    def one(pred: Prediction) -> None:
        if stop.is_set():
            return
        src = exams[pred.instance_id]
        try:
            image = images(src) if pred.patch.strip() else None
            res = grade_prediction(src, pred, image, (records or {}).get(src.exam_id))
        except EnvironmentRefused as exc:
            res = _result(ERROR, f"environment not built: {exc}")
        res = {"exam": src.exam_id, "model_name_or_path": pred.model, **res}
        with lock:
            results[pred.instance_id] = res
            if progress is not None:
                progress(pred.instance_id, res["outcome"], len(results), len(preds))

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        for fut in [pool.submit(one, p) for p in preds]:
            fut.result()
    finally:  # an interrupt (Ctrl-C, SIGTERM) stops the predictions not yet started
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
    return report(preds, results, len({s.exam_id for s in exams.values()}))
