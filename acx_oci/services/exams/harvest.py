"""``exam harvest``: certified exams from a repository's history with one command, and the funnel that says
where the others dropped.

A candidate (:mod:`candidates`) is imported as ``exam import --repo R --base COMMIT^ --fix COMMIT`` would,
into the suite; the suite is certified as ``exam certify`` would (each exam in its environment image, built or
pulled by spec, FAIL_TO_PASS derived); the funnel reads each record. An exam refused with a verdict leaves the
suite for ``CERTS/harvest/refused/`` (kept to read), so what stays is ready for ``benchmark push``; one whose
certification met a harness lane error (no verdict) stays, and the next run grades it again.

``CERTS/harvest.json`` holds each candidate's row, written after every step: a run that is interrupted keeps
what it did, and the next run skips the candidates that already have a verdict and serves the certified ones
from the certification cache.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acx_oci.errors import AcxError, UsageError
from acx_oci.files import load_json_file, load_yaml_or_json_inside
from acx_oci.model import exam as mx
from acx_oci.services.exams import importer
from acx_oci.services.exams.candidates import Candidate
from acx_oci.services.exams.harness import lane_error

STATE_FILE = "harvest.json"
REFUSED_DIR = "harvest/refused"
FUNNEL = ("candidates", "imported", "environment", "referencePasses", "failToPass", "certified")
#: the stage a row stops at while it has no verdict yet (imported, waiting for certification)
PENDING = "imported"


@dataclass(frozen=True)
class Row:
    """One candidate's way through the funnel: the last stage it reached, and why it went no further."""

    commit: str
    exam: str
    stage: str
    reason: str = ""
    verdict: bool = False  # a decision about the exam (certified or refused), not a fault of the harness

    @property
    def certified(self) -> bool:
        """Whether the candidate's exam certified (the last stage of the funnel)."""
        return self.stage == "certified"

    def json(self) -> dict[str, Any]:
        """The row as ``harvest.json`` keeps it and ``--json`` prints it."""
        return {"commit": self.commit, "exam": self.exam, "stage": self.stage, "reason": self.reason,
                "certified": self.certified, "verdict": self.verdict}


def exam_id(repo: Path, commit: str) -> str:
    """The exam id a harvest gives a commit: the repository's folder name and the commit's first 10 digits."""
    folder = repo.parent.name if repo.name in ("repo", ".git") else repo.name
    return importer.exam_id_for(f"{folder.split('+')[-1]}-{commit[:10]}")


def stage_of(rec: Mapping[str, Any]) -> tuple[str, str, bool]:
    """(the last funnel stage the record's exam reached, the record's words for the drop, whether it is a
    verdict): a lane error is the harness's fault, no verdict on the exam."""
    stages = rec.get("stages") or {}
    if rec.get("certified"):
        return "certified", "", True
    fault = lane_error(stages)
    if fault is not None:
        return PENDING, fault, False
    words = "; ".join(f"{s}: {f}" for s, f in mx.failures(rec) if s != "promotion")[:500]
    gold = stages.get("gold") or {}
    if gold.get("environmentBuilt") is False or not (stages.get("seed") or {}).get("ok", True):
        return "imported", words, True
    if gold.get("referencePasses") is not True:
        return "environment", words, True
    if gold.get("nothingToSolve") or gold.get("untouchedFails") is False:
        return "referencePasses", words, True
    return "failToPass", words, True


def funnel(rows: Iterable[Row]) -> dict[str, int]:
    """How many candidates reached each stage (each count includes the stages after it)."""
    out = dict.fromkeys(FUNNEL, 0)
    for r in rows:
        for s in FUNNEL[:FUNNEL.index(r.stage) + 1]:
            out[s] += 1
    return out


def load_state(certs: Path) -> dict[str, Row]:
    """The rows an earlier run left in ``CERTS/harvest.json``, by commit (none: a first run)."""
    path = certs / STATE_FILE
    if not path.is_file():
        return {}
    doc = load_json_file(path, "harvest state")
    rows = doc.get("rows") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        raise UsageError(f"{path}: expected {{\"rows\": [...]}} (a harvest's state); found something else")
    out: dict[str, Row] = {}
    for r in rows:
        if not (isinstance(r, dict) and isinstance(r.get("commit"), str) and isinstance(r.get("exam"), str)
                and r.get("stage") in FUNNEL):
            raise UsageError(f"{path}: a row is not {{commit, exam, stage}} with a funnel stage: {str(r)[:120]}")
        out[r["commit"]] = Row(r["commit"], r["exam"], r["stage"], str(r.get("reason") or ""),
                               r.get("verdict") is True)
    return out


def save_state(certs: Path, rows: Mapping[str, Row], meta: Mapping[str, Any]) -> None:
    """Write the rows (atomically: an interrupt leaves the old state or the new one, never half of one)."""
    certs.mkdir(parents=True, exist_ok=True)
    tmp = certs / f".{STATE_FILE}.tmp"
    tmp.write_text(json.dumps({**meta, "rows": [r.json() for r in rows.values()]}, indent=2) + "\n")
    os.replace(tmp, certs / STATE_FILE)


@dataclass
class Harvest:
    """One run over the candidates: each one's row, kept in ``CERTS/harvest.json`` as it changes."""

    repo: Path
    suite: Path
    certs: Path
    classification: dict[str, Any]
    rows: dict[str, Row]
    meta: dict[str, Any]

    def save(self) -> None:
        """The rows to ``CERTS/harvest.json`` (after every step: an interrupt loses at most the step)."""
        save_state(self.certs, self.rows, self.meta)

    def of(self, cands: Iterable[Candidate]) -> list[Row]:
        """The rows of ``cands`` that have one (a candidate not reached yet has none)."""
        return [self.rows[c.commit] for c in cands if c.commit in self.rows]

    def import_all(self, cands: list[Candidate], progress: Callable[[str], None]) -> None:
        """Import each candidate without a verdict that the suite does not hold yet; a refusal is its row."""
        for i, c in enumerate(cands, 1):
            known = self.rows.get(c.commit)
            eid = exam_id(self.repo, c.commit)
            held = (self.suite / "tasks" / eid).is_dir()
            if known is not None and known.verdict and (held or not known.certified):
                continue  # decided by an earlier run (certified ones are served from the cache below)
            if held:
                self.rows[c.commit] = Row(c.commit, eid, PENDING)
                continue
            try:
                parts = importer.from_repo(self.repo, c.parent, c.commit, exam_id=eid)
                importer.write_all([parts], self.suite, self.classification)
                self.rows[c.commit] = Row(c.commit, eid, PENDING)
                progress(f"exam harvest: imported [{i}/{len(cands)}] {eid} ({c.subject[:60]})")
            except AcxError as exc:  # the exam cannot be made from this commit: its reason, named
                self.rows[c.commit] = Row(c.commit, eid, "candidates", f"import: {exc}"[:500], True)
                progress(f"exam harvest: not imported [{i}/{len(cands)}] {eid}: {str(exc)[:160]}")
            self.save()

    def settle(self, records: Mapping[str, Mapping[str, Any]], cands: list[Candidate]) -> None:
        """Each imported candidate's row from its record; an exam refused with a verdict leaves the suite."""
        for c in cands:
            row = self.rows.get(c.commit)
            if row is None or row.stage == "candidates" or row.exam not in records:
                continue
            stage, reason, verdict = stage_of(records[row.exam])
            self.rows[c.commit] = Row(c.commit, row.exam, stage, reason, verdict)
            if verdict and stage != "certified":
                self._set_aside(row.exam)
        self.save()

    def _set_aside(self, eid: str) -> None:
        """The refused exam out of the suite's listing first (a suite never lists an exam it lacks), then moved."""
        doc = load_yaml_or_json_inside(self.suite, "benchmark.json", "benchmark suite")
        if isinstance(doc, dict) and isinstance(doc.get("tasks"), list):
            kept = [t for t in doc["tasks"] if not (isinstance(t, dict) and t.get("id") == eid)]
            if len(kept) != len(doc["tasks"]):
                importer.replace_file(self.suite, "benchmark.json",
                                      json.dumps({**doc, "tasks": kept}, indent=2).encode("utf-8") + b"\n")
        src = self.suite / "tasks" / eid
        if not src.is_dir() or src.is_symlink():
            return
        dst = self.certs / REFUSED_DIR / eid
        if dst.exists():
            shutil.rmtree(dst)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(src), str(dst))


def report(h: Harvest, cands: list[Candidate], env_store: str, interrupted: bool = False) -> dict[str, Any]:
    """The ``--json`` document: the funnel, each candidate's row, where the suite and its images are."""
    rows = [h.rows.get(c.commit) or Row(c.commit, exam_id(h.repo, c.commit), "candidates", "not reached")
            for c in cands]
    return {"funnel": funnel(rows), "candidates": [{**r.json(), "date": c.date, "subject": c.subject}
                                                    for r, c in zip(rows, cands, strict=True)],
            "suite": str(h.suite), "certifications": str(h.certs), "envStore": env_store,
            "interrupted": interrupted}
