"""Certify a suite: every exam's stages (:mod:`stages`) in order, exams in parallel, records cached by freeze hash
and streamed as they finish; the canary registry, the summary and the report read back from ``--out``."""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acx_oci.errors import EnvironmentRefused, IntegrityError, UsageError
from acx_oci.files import load_json_file, read_bytes
from acx_oci.model import CertificationRecord, summarize
from acx_oci.model import exam as mx
from acx_oci.sandbox import abandon_runs
from acx_oci.services.exams.environments import EnvImages, StageReport
from acx_oci.services.exams.harness import lane_error
from acx_oci.services.exams.source import ExamSource, discover, exam_freeze_hash, load_exam, load_patterns
from acx_oci.services.exams.stages import Note, certify_exam, environment_record, gold_runs_for, quiet_note

if TYPE_CHECKING:
    from acx_oci.services.exams.cluster import Cluster

REGISTRY_FILE = "canaries.json"
SUMMARY_FILE = "summary.json"
#: One JSON line per exam as it finishes (the stderr progress, for scripts that watch a long run).
STREAM_FILE = "certify-events.jsonl"
#: Runs the reference must pass before an exam with derived controls certifies (``--gold-runs``).
GOLD_RUNS = 3
#: The stage a :data:`StageReport` hears when an exam's record is kept: step = exams done, of = exams in all.
FINISHED = "finished"
SCAN_MAX_BYTES = 64 * 1024 * 1024  # one scanned file (a transcript, a dataset shard) read at most this far


def default_out() -> Path:
    """Where exam records and the canary registry live: ``$ACX_EXAM_STATE``, else ``~/.acx-oci/exams``."""
    return Path(os.environ.get("ACX_EXAM_STATE") or Path.home() / ".acx-oci" / "exams")


def _write_json(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}.{threading.get_ident()}")
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", "utf-8")
    os.replace(tmp, path)


class _Registry:
    """The host-only canary registry: marker -> {exam, file}; a marker owned by another exam/file collides."""

    def __init__(self, path: Path) -> None:
        self.path, self.lock = path, threading.Lock()
        self.doc: dict[str, Any] = load_json_file(path, "canary registry") if path.is_file() else {}

    def register(self, exam: str, markers: dict[str, str]) -> list[str]:
        with self.lock:
            clash = [f"{m} already registered to {self.doc[m]['exam']}:{self.doc[m]['file']}"
                     for f, m in markers.items()
                     if m in self.doc and (self.doc[m]["exam"], self.doc[m]["file"]) != (exam, f)]
            if not clash:
                for f, m in markers.items():
                    self.doc[m] = {"exam": exam, "file": f}
                _write_json(self.path, self.doc)
            return clash


def _inside(child: Path, parent: Path) -> bool:
    c, p = child.resolve(), parent.resolve()
    return c == p or p in c.parents


def stderr_progress(line: str) -> None:
    """Progress of a certification, one line per exam as it finishes, on stderr (stdout keeps the JSON)."""
    print(line, file=sys.stderr, flush=True)


def _verdict(rec: CertificationRecord) -> str:
    fault = lane_error(rec["stages"])
    if fault is not None:
        return f"harness lane error, not cached ({fault})"
    if rec.certified:
        return "certified"
    stage, fact = (rec.failures() or [("?", "not certified")])[0]
    gold = rec.stage("gold")
    if gold.get("environmentBuilt") is False:  # the reason is the news (and the way out)
        fact = str(gold.get("reason") or fact)
    return f"refused at {stage}: {fact}"


def _progress_line(done: int, total: int, rec: CertificationRecord, seconds: float, cached: bool) -> str:
    return (f"exam certify [{done}/{total}] {rec.exam}: {_verdict(rec)} "
            f"({'cached' if cached else f'{seconds:.1f}s'})")


def _cache_key(fh: str, image_digest: str | None, spec: bool = False) -> str:
    """The freeze hash, and what graded: the image's digest, or ``host`` for an exam with an environment spec
    (``spec``) graded without its image."""
    if image_digest:
        return f"{fh.split(':', 1)[1]}-{image_digest.split(':', 1)[1][:16]}"
    return fh.split(":", 1)[1] + ("-host" if spec else "")


def _cached(out: Path, src: ExamSource, key: str, gold_runs: int) -> CertificationRecord | None:
    """A stored, sound record for this freeze hash whose gold was run as often as this run asks, else None."""
    path = out / "by-freeze" / f"{key}.json"
    if not path.is_file():
        return None
    try:
        rec = CertificationRecord.load(load_json_file(path, "cached certification record"))
    except IntegrityError:
        return None
    if rec.exam != src.exam_id:
        return None
    if int(rec.stage("gold").get("goldRuns", 1)) < gold_runs_for(src, gold_runs):
        return None  # certified with fewer gold runs than asked: run again
    return rec


class _Stream:
    """Each exam's result as it finishes: a line to ``progress`` and a JSON line in ``out/STREAM_FILE``."""

    def __init__(self, out: Path, total: int, progress: Callable[[str], None] | None,
                 stages: StageReport | None) -> None:
        self.path, self.total, self.progress, self.stages = out / STREAM_FILE, total, progress, stages
        self.lock, self.done = threading.Lock(), 0
        self.path.write_text("", "utf-8")

    def __call__(self, rec: CertificationRecord, seconds: float, cached: bool) -> None:
        with self.lock:
            self.done += 1
            event = {"event": "exam", "done": self.done, "total": self.total, "exam": rec.exam,
                     "certified": rec.certified, "verdict": _verdict(rec), "cached": cached,
                     "laneError": lane_error(rec["stages"]) is not None, "seconds": round(seconds, 3)}
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(event, sort_keys=True) + "\n")
            if self.stages is not None:
                self.stages(str(rec["exam"]), FINISHED, self.done, self.total)
            if self.progress is not None:
                self.progress(_progress_line(self.done, self.total, rec, seconds, cached))


def certify_suite(path: Path, *, jobs: int, out: Path, patterns: Path | None = None,
                  image: tuple[Path, str] | None = None,
                  progress: Callable[[str], None] | None = stderr_progress, gold_runs: int = GOLD_RUNS,
                  executor: Cluster | None = None,
                  environments: EnvImages | None = None,
                  stages: StageReport | None = None) -> list[CertificationRecord]:
    """Certify every exam under ``path`` (stages in order per exam, exams in parallel; a suite of fewer exams than
    ``jobs`` grades each exam's probes and mutants in parallel instead); records sorted by id.

    ``image`` = (unpacked root, image manifest digest) promotes: the chain runs inside the image.
    ``progress`` gets one line per exam as it finishes (default: stderr); ``out/certify-events.jsonl`` gets
    the same as JSON lines. ``gold_runs``: runs the reference must pass where the controls are derived.
    ``executor`` (a Dask cluster) certifies the exams on its workers, at most ``jobs`` at once; the canary
    stage, the records and the cache stay here. ``environments`` gives an exam with an environment spec its own
    image (:class:`acx_oci.services.exams.environments.EnvImages`), used as ``image`` for that exam; without
    it an exam's spec is not used and its record says the host graded (``freeze.environment.python: host``).
    ``stages`` hears which stage each exam is in as it starts (from the pool's threads) and :data:`FINISHED`.
    With both ``executor`` and ``environments``, each image is built (or found) here and pinned by digest; the
    worker pulls it from the store and the record must name that digest.
    """
    dirs = discover(path)
    suite_root = path if not (path / mx.EXAM_FILE).is_file() else path.parent
    if _inside(out, suite_root) or _inside(out, path):
        raise UsageError(f"exam certify: --out {out} is inside the suite; records never go into the suite")
    if executor is not None and image is not None:
        raise UsageError("exam certify: --promote/--image runs here only (the image is unpacked on this host); "
                         "drop --executor")
    pats = load_patterns(patterns)
    sources = [load_exam(d) for d in dirs]
    ids = [s.exam_id for s in sources]
    if len(set(ids)) != len(ids):
        raise UsageError(f"exam certify: duplicate exam ids in {path}")
    registry = _Registry(out / REGISTRY_FILE)
    out.mkdir(parents=True, exist_ok=True)
    secrets = (out.resolve(),)  # the records and the host-only canary registry: proven out of every sandbox
    stream = _Stream(out, len(sources), progress, stages)
    records: list[CertificationRecord] = []

    images: dict[str, tuple[Path, str] | None] = {}
    pinned: dict[str, str] = {}  # on a cluster: each exam's image by digest, pulled by the worker

    def digest_of(exam: str) -> str | None:
        image = images.get(exam)
        return image[1] if image else (pinned[exam].rsplit("@", 1)[1] if exam in pinned else None)

    def keep(src: ExamSource, rec: CertificationRecord, fh: str | None, t0: float, cached: bool) -> None:
        doc = rec.to_json()  # serialised once, written twice
        _write_json(out / "records" / f"{src.exam_id}.json", doc)
        if not cached and fh is not None and lane_error(rec["stages"]) is None \
                and rec.freeze_hash == fh:  # a lane error is no verdict
            key = _cache_key(fh, digest_of(src.exam_id), src.environment is not None)
            _write_json(out / "by-freeze" / f"{key}.json", doc)
        records.append(rec)
        stream(rec, time.monotonic() - t0, cached)

    def prepared(src: ExamSource) -> tuple[ExamSource, str] | None:
        """The exam's image had (found, pulled or built) and its cache looked up; None: its record is kept."""
        t0 = time.monotonic()
        try:
            if executor is not None and environments is not None:
                ref = environments.pinned(src)
                if ref is not None:
                    pinned[src.exam_id] = ref
            else:
                images[src.exam_id] = image or (environments(src) if environments is not None else None)
        except EnvironmentRefused as exc:  # the exam's refusal, named; never cached (a wheel may come later)
            keep(src, environment_record(src, str(exc)), None, t0, False)
            return None
        fh = exam_freeze_hash(src, pats)
        hit = _cached(out, src, _cache_key(fh, digest_of(src.exam_id), src.environment is not None), gold_runs)
        if hit is not None:
            keep(src, hit, fh, t0, True)
            return None
        return src, fh

    if executor is not None:
        from acx_oci.services.exams.cluster import certify_on_cluster

        todo = [item for item in map(prepared, sources) if item is not None]  # every image pinned first
        opts = environments.store_options if environments is not None else None
        for src, fh, rec, t0 in certify_on_cluster(executor, todo, pats, gold_runs, jobs, registry.register,
                                                   pinned, opts):
            keep(src, rec, fh, t0, False)
    else:
        def one(item: tuple[ExamSource, str], note: Note, lanes: int) -> CertificationRecord:
            return certify_exam(item[0], pats, registry.register, images.get(item[0].exam_id), secrets, gold_runs,
                                note, lanes)

        _certify_here(sources, prepared, jobs, one, keep, stages)
    _write_json(out / SUMMARY_FILE, summarize(load_records(out)))
    return sorted(records, key=lambda r: r.exam)


def _certify_here(sources: list[ExamSource], prepared: Callable[[ExamSource], tuple[ExamSource, str] | None],
                  jobs: int, one: Callable[[tuple[ExamSource, str], Note, int], CertificationRecord],
                  keep: Callable[[ExamSource, CertificationRecord, str | None, float, bool], None],
                  stages: StageReport | None) -> None:
    """``sources`` certified on this host, ``jobs`` exams at once: each worker has its exam's image ready
    (``prepared``: one build at a time, so the next exam's image is made while this one is graded) and then
    grades it (``one``; ``keep`` keeps its record). An interrupt stops the exams not yet started."""
    stop = threading.Event()  # set by an interrupt: no exam starts after it, in any worker
    lanes = max(1, jobs // max(1, min(jobs, len(sources))))  # the cores fewer exams than --jobs leave free

    def run(src: ExamSource) -> None:
        if stop.is_set():
            return
        try:
            item = prepared(src)
            if item is None or stop.is_set():
                return
            t0 = time.monotonic()  # the exam's certification alone, its image apart (the build says its own)
            note = functools.partial(stages, src.exam_id) if stages is not None else quiet_note
            keep(src, one(item, note, lanes), item[1], t0, False)
        except BaseException:  # an interrupt raised in this worker (its progress line): the others stop too
            stop.set()
            raise

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        for fut in [pool.submit(run, src) for src in sources]:
            fut.result()
    except BaseException:  # an interrupt (Ctrl-C, SIGTERM): the exams in flight stop at once, as lane errors
        stop.set()
        abandon_runs(True)
        raise
    finally:  # and the exams not yet started never start
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        abandon_runs(False)


def load_records(out: Path) -> dict[str, CertificationRecord]:
    """Every record under ``out/records``; a record whose digest or shape is wrong raises IntegrityError."""
    found: dict[str, CertificationRecord] = {}
    for p in sorted((out / "records").glob("*.json")):
        rec = CertificationRecord.load(load_json_file(p, "certification record"), f"certification record {p}")
        found[rec.exam] = rec
    return found


def suite_freeze_hashes(path: Path, patterns: Path | None = None) -> dict[str, str]:
    """Each exam's freeze hash, recomputed from the files alone (nothing graded)."""
    pats = load_patterns(patterns)
    return {s.exam_id: exam_freeze_hash(s, pats) for s in (load_exam(d) for d in discover(path))}


def suite_canaries(path: Path) -> dict[str, dict[str, str]]:
    """marker -> {exam, file} read straight from a suite's hidden test files."""
    out: dict[str, dict[str, str]] = {}
    for src in (load_exam(d) for d in discover(path)):
        for f, text in src.hidden.items():
            for m in mx.find_canaries(text):
                out[m] = {"exam": src.exam_id, "file": f"{src.dir.name}/hidden/{f}"}
    return out


def load_registry(path: Path) -> dict[str, dict[str, str]]:
    """The canary registry (canary -> the exam and file it marks); UsageError unless it is a JSON object."""
    doc = load_json_file(path, "canary registry")
    if not isinstance(doc, dict):
        raise UsageError(f"canary registry ({path}): expected an object")
    return doc


def scan_for_canaries(files: Iterable[Path], registry: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """Every marker-shaped string in ``files``; ``exam``/``examFile`` when the registry knows it."""
    hits = []
    for p in files:
        text = read_bytes(p, "scanned file", SCAN_MAX_BYTES).decode("utf-8", "replace")
        for m in mx.find_canaries(text):
            entry = registry.get(m)
            hits.append({"file": str(p), "marker": m, "known": entry is not None,
                         "exam": entry["exam"] if entry else None, "examFile": entry["file"] if entry else None})
    return hits


def report(out: Path) -> dict[str, Any]:
    """Regenerate the summary from the sealed records; a stored summary that disagrees raises IntegrityError."""
    summary = summarize(load_records(out))
    stored_path = out / SUMMARY_FILE
    if stored_path.is_file():
        stored = load_json_file(stored_path, "stored certification summary")
        if stored != summary:
            diff = sorted(k for k in set(stored) | set(summary) if stored.get(k) != summary.get(k))
            raise IntegrityError(f"stored summary {stored_path} disagrees with the records on {', '.join(diff)}")
    return summary
