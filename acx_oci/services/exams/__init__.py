"""Exam certification (issue 11): ``acx-oci exam certify|canary scan|report``.

Stable interface for the benchmark / attest side (keep these signatures):

* ``certify_suite(path, *, jobs, out, patterns=None) -> list[dict]`` - certify a suite dir (or one exam
  dir); one sealed record per exam, written to ``out/records/<exam>.json`` (never into the suite) and
  cached by freeze hash (``out/by-freeze/<hex>.json``): an exam whose freeze hash has a stored, sound
  record is not re-run. Also writes ``out/summary.json`` and the host-only canary registry
  ``out/canaries.json``.
* ``load_records(out) -> dict[exam_id, record]`` - every stored record, each checked with
  :func:`acx_oci.model.exam.check_record` (a record with problems raises :class:`IntegrityError`).
* ``suite_freeze_hashes(path) -> dict[exam_id, freeze hash]`` - recomputed from the suite's files, nothing
  run; compare with ``record["stages"]["freeze"]["freezeHash"]`` (a mismatch = uncertified).
* ``scan_for_canaries(files, registry) -> list[dict]`` and ``suite_canaries(path)``.
* ``report(out) -> dict`` - the summary regenerated from the records; raises when ``summary.json`` disagrees.

Pure pieces (digest, checks, freeze hash, summary) live in :mod:`acx_oci.model.exam`.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from acx_oci.errors import IntegrityError, UsageError
from acx_oci.files import load_json_file, read_bytes
from acx_oci.model import exam as mx
from acx_oci.services.exams.harness import lane_error
from acx_oci.services.exams.source import discover, exam_freeze_hash, load_exam, load_patterns
from acx_oci.services.exams.stages import certify_exam

__all__ = ["certify_suite", "default_out", "load_records", "report", "scan_for_canaries", "suite_canaries",
           "suite_freeze_hashes"]

REGISTRY_FILE = "canaries.json"
SUMMARY_FILE = "summary.json"
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


def _progress_line(done: int, total: int, rec: dict[str, Any], seconds: float, cached: bool) -> str:
    fault = lane_error(rec["stages"])
    if fault is not None:
        verdict = f"harness lane error, not cached ({fault})"
    elif rec["certified"]:
        verdict = "certified"
    else:
        stage, fact = (mx.failures(rec) or [("?", "not certified")])[0]
        verdict = f"refused at {stage}: {fact}"
    return f"exam certify [{done}/{total}] {rec['exam']}: {verdict} ({'cached' if cached else f'{seconds:.1f}s'})"


def certify_suite(path: Path, *, jobs: int, out: Path, patterns: Path | None = None,
                  image: tuple[Path, str] | None = None,
                  progress: Callable[[str], None] | None = stderr_progress) -> list[dict[str, Any]]:
    """Certify every exam under ``path`` (stages in order per exam, exams in parallel); records sorted by id.

    ``image`` = (unpacked root, image manifest digest) promotes: the chain runs inside the image.
    ``progress`` gets one line per exam as it finishes (default: stderr).
    """
    dirs = discover(path)
    suite_root = path if not (path / mx.EXAM_FILE).is_file() else path.parent
    if _inside(out, suite_root) or _inside(out, path):
        raise UsageError(f"exam certify: --out {out} is inside the suite; records never go into the suite")
    pats = load_patterns(patterns)
    sources = [load_exam(d) for d in dirs]
    ids = [s.exam_id for s in sources]
    if len(set(ids)) != len(ids):
        raise UsageError(f"exam certify: duplicate exam ids in {path}")
    registry = _Registry(out / REGISTRY_FILE)
    out.mkdir(parents=True, exist_ok=True)
    secrets = (out.resolve(),)  # the records and the host-only canary registry: proven out of every sandbox

    lock, finished = threading.Lock(), [0]

    def one(src: Any) -> dict[str, Any]:
        t0 = time.monotonic()
        rec, cached = certify_one(src)
        if progress is not None:
            with lock:
                finished[0] += 1
                progress(_progress_line(finished[0], len(sources), rec, time.monotonic() - t0, cached))
        return rec

    def certify_one(src: Any) -> tuple[dict[str, Any], bool]:
        fh = exam_freeze_hash(src, pats)
        key = fh.split(":", 1)[1] + (f"-{image[1].split(':', 1)[1][:16]}" if image else "")
        cached = out / "by-freeze" / f"{key}.json"
        if cached.is_file():
            rec = load_json_file(cached, "cached certification record")
            if not mx.check_record(rec) and rec["exam"] == src.exam_id:
                _write_json(out / "records" / f"{src.exam_id}.json", rec)
                return dict(rec), True
        rec = certify_exam(src, pats, registry.register, image, secrets)
        _write_json(out / "records" / f"{src.exam_id}.json", rec)
        fault = lane_error(rec["stages"])
        if fault is None and rec["stages"]["freeze"].get("freezeHash") == fh:
            _write_json(cached, rec)  # a harness lane error is no verdict: the next run certifies again
        return rec, False

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        records = list(pool.map(one, sources))
    finally:  # an interrupt (Ctrl-C, SIGTERM) stops the exams not yet started, not after all of them
        pool.shutdown(wait=True, cancel_futures=True)
    _write_json(out / SUMMARY_FILE, mx.summarize(load_records(out)))
    return sorted(records, key=lambda r: str(r["exam"]))


def load_records(out: Path) -> dict[str, dict[str, Any]]:
    """Every record under ``out/records``; a record whose digest or shape is wrong raises IntegrityError."""
    found: dict[str, dict[str, Any]] = {}
    for p in sorted((out / "records").glob("*.json")):
        rec = load_json_file(p, "certification record")
        problems = mx.check_record(rec)
        if problems:
            raise IntegrityError(f"certification record {p}: {'; '.join(problems)}")
        found[str(rec["exam"])] = rec
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
    summary = mx.summarize(load_records(out))
    stored_path = out / SUMMARY_FILE
    if stored_path.is_file():
        stored = load_json_file(stored_path, "stored certification summary")
        if stored != summary:
            diff = sorted(k for k in set(stored) | set(summary) if stored.get(k) != summary.get(k))
            raise IntegrityError(f"stored summary {stored_path} disagrees with the records on {', '.join(diff)}")
    return summary
