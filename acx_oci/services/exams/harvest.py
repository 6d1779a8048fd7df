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

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from acx_oci import safetree
from acx_oci.errors import AcxError, TreeTooSlow, UsageError
from acx_oci.files import load_json_file, load_yaml_or_json_inside
from acx_oci.model import CertificationRecord
from acx_oci.services.exams import gitrepo, importer
from acx_oci.services.exams.candidates import Candidate, printable
from acx_oci.services.exams.certify import certify_suite, load_records
from acx_oci.services.exams.environments import EnvImages, StageReport
from acx_oci.services.exams.harness import lane_error

if TYPE_CHECKING:
    from acx_oci.oci import StoreOptions
    from acx_oci.services.exams.cluster import Cluster

STATE_FILE = "harvest.json"
REFUSED_DIR = "harvest/refused"
FUNNEL = ("candidates", "imported", "environment", "referencePasses", "failToPass", "certified")
#: the stage a row stops at while it has no verdict yet (imported, waiting for certification)
PENDING = "imported"
IMPORTING = "importing"  # a row's reason while its import runs: a run cut short there left no verdict


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


def exam_ids(repo: Path, commit: str) -> tuple[str, str]:
    """The ids a harvest may give a commit: the repository's folder name (cut to 60 characters, never the
    commit's digits) and the commit's first 10 digits, or its first 16 when another commit took the first."""
    stem = importer.exam_id_for(gitrepo.repo_name(repo))[:60].rstrip("-._") or "exam"
    return importer.exam_id_for(f"{stem}-{commit[:10]}"), importer.exam_id_for(f"{stem}-{commit[:16]}")


def stage_of(rec: CertificationRecord) -> tuple[str, str, bool]:
    """(the last funnel stage the record's exam reached, the record's words for the drop, whether it is a
    verdict): a lane error is the harness's fault, no verdict on the exam."""
    if rec.certified:
        return "certified", "", True
    fault = lane_error(rec["stages"])
    if fault is not None:
        return PENDING, fault, False
    words = "; ".join(f"{s}: {f}" for s, f in rec.failures() if s != "promotion")[:500]
    gold = rec.stage("gold")
    if gold.get("environmentBuilt") is False:  # the store, the index or the machine: tried again next run
        return "imported", words, False
    if not rec.stage("seed").get("ok", True):
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
    tmp = f".{STATE_FILE}.tmp"
    (certs / tmp).unlink(missing_ok=True)  # a crash's leftover (a link is removed, never followed)
    safetree.write_inside(certs, tmp, (json.dumps({**meta, "rows": [r.json() for r in rows.values()]},
                                                  indent=2) + "\n").encode("utf-8"), 0o644)
    os.replace(certs / tmp, certs / STATE_FILE)


@dataclass
class Harvest:
    """One run over the candidates: each one's row, kept in ``CERTS/harvest.json`` as it changes."""

    repo: Path
    suite: Path
    certs: Path
    classification: dict[str, Any]
    rows: dict[str, Row]
    meta: dict[str, Any]
    others: list[str] = field(default_factory=list)  # the suite's other exams that stand refused
    python: str | None = None  # every exam's environment Python (exam import --python), else derived

    def save(self) -> None:
        """The rows to ``CERTS/harvest.json`` (after every step: an interrupt loses at most the step)."""
        save_state(self.certs, self.rows, self.meta)

    def of(self, cands: Iterable[Candidate]) -> list[Row]:
        """The rows of ``cands`` that have one (a candidate not reached yet has none)."""
        return [self.rows[c.commit] for c in cands if c.commit in self.rows]

    def exam_of(self, commit: str) -> str:
        """The commit's exam id: the one its row holds when that is one of the commit's own ids (a state file
        never names another exam to move), else the first of its ids no other commit holds."""
        ids = exam_ids(self.repo, commit)
        row = self.rows.get(commit)
        if row is not None and row.exam in ids:
            return row.exam
        taken = {r.exam for c, r in self.rows.items() if c != commit}
        return ids[0] if ids[0] not in taken else ids[1]

    def check_suite(self) -> None:
        """Before anything is imported: a suite that is there is one (a fault of the suite is no commit's)."""
        if self.suite.exists() and not self.suite.is_dir():
            raise UsageError(f"exam harvest: -o {self.suite} is not a directory")
        doc = load_yaml_or_json_inside(self.suite, "benchmark.json", "benchmark suite") \
            if self.suite.is_dir() else None
        if doc is not None and not (isinstance(doc, dict) and isinstance(doc.get("tasks"), list)):
            raise UsageError(f"{self.suite / 'benchmark.json'}: expected a benchmark suite with a tasks list; "
                             "found something else")

    def listed(self) -> set[str]:
        """The exam ids the suite's ``benchmark.json`` lists (an exam written but never listed is no exam)."""
        doc = load_yaml_or_json_inside(self.suite, "benchmark.json", "benchmark suite") \
            if self.suite.is_dir() else None
        tasks = doc.get("tasks") if isinstance(doc, dict) else None
        return {str(t.get("id")) for t in tasks if isinstance(t, dict)} if isinstance(tasks, list) else set()

    def import_all(self, cands: list[Candidate], progress: Callable[[str], None]) -> None:
        """Import each candidate without a verdict that the suite does not hold yet; a refusal about the commit
        is its row (a verdict), a fault of the suite stops the run (exit 2) and one of time is tried again."""
        for i, c in enumerate(cands, 1):
            known = self.rows.get(c.commit)
            eid = self.exam_of(c.commit)
            held = eid in self.listed() and (self.suite / "tasks" / eid / "exam.yaml").is_file()
            if known is not None and known.verdict and (held or not known.certified):
                continue  # decided by an earlier run (certified ones are served from the cache below)
            if held:
                self.rows[c.commit] = Row(c.commit, eid, PENDING)
                continue
            partial = self.suite / "tasks" / eid
            if known is not None and known.reason == IMPORTING and partial.is_dir() and not partial.is_symlink():
                shutil.rmtree(partial)  # this harvest's own import, cut short before the suite listed it
            self.rows[c.commit] = Row(c.commit, eid, "candidates", IMPORTING)
            self.save()
            try:
                parts = importer.from_repo(self.repo, c.parent, c.commit, exam_id=eid, python=self.python)
            except AcxError as exc:  # the exam cannot be made from this commit: its reason, named
                again = isinstance(exc, TreeTooSlow)  # out of time on a loaded machine: no verdict, tried again
                self.rows[c.commit] = Row(c.commit, eid, "candidates", f"import: {exc}"[:500], not again)
                progress(f"exam harvest: not imported [{i}/{len(cands)}] {eid}: {printable(str(exc))[:160]}")
                self.save()
                continue
            importer.write_all([parts], self.suite, self.classification)  # a suite fault: exit 2, row kept
            self.rows[c.commit] = Row(c.commit, eid, PENDING)
            progress(f"exam harvest: imported [{i}/{len(cands)}] {eid} ({printable(c.subject)[:60]})")
            self.save()

    def settle(self, records: Mapping[str, CertificationRecord], cands: list[Candidate]) -> None:
        """Each imported candidate's row from its record; an exam refused with a verdict leaves the suite.
        Other exams of the suite (not this harvest's) are never moved: those refused are named (``others``)."""
        mine: set[str] = set()
        for c in cands:
            row = self.rows.get(c.commit)
            if row is None or row.stage == "candidates" or row.exam != self.exam_of(c.commit):
                continue
            mine.add(row.exam)
            if row.exam not in records:
                continue
            stage, reason, verdict = stage_of(records[row.exam])
            self.rows[c.commit] = Row(c.commit, row.exam, stage, reason, verdict)
            if verdict and stage != "certified":
                self._set_aside(row.exam)
        self.others = sorted(e for e in self.listed() - mine - {r.exam for r in self.rows.values()}
                             if e in records and not records[e].certified)
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


def report(h: Harvest, cands: list[Candidate], env_store: str | None, interrupted: bool = False) -> dict[str, Any]:
    """The ``--json`` document: the funnel, each candidate's row, where the suite and its images are."""
    rows = [h.rows.get(c.commit) or Row(c.commit, h.exam_of(c.commit), "candidates", "not reached")
            for c in cands]
    return {"funnel": funnel(rows), "candidates": [{**r.json(), "date": c.date, "subject": c.subject}
                                                    for r, c in zip(rows, cands, strict=True)],
            "suite": str(h.suite), "certifications": str(h.certs), "envStore": env_store,
            "otherExamsRefused": h.others, "interrupted": interrupted}


class Shown(Protocol):
    """What the caller shows while a harvest's exams certify (the CLI's verdict lines and stage reports)."""

    @property
    def stages(self) -> StageReport | None:
        """Hears which stage each exam is in (None: nobody shows stages)."""

    def line(self, text: str) -> None:
        """One exam's verdict line, as it finishes."""

    def stop(self) -> None:
        """The certification ended: anything drawn live is put away."""


@dataclass(frozen=True)
class Grading:
    """How a harvest certifies: the image store (None: the host's Python grades), its options and where wheels
    come from, exams at once, and a cluster (each exam's image reaching the workers by digest)."""

    store: str | None
    jobs: int
    find_links: tuple[Path, ...] = ()
    index_url: str | None = None
    options: StoreOptions | None = None
    executor: Cluster | None = None


def run(h: Harvest, cands: list[Candidate], grading: Grading, say: Callable[[str], None],
        shown: Callable[[int], Shown], interrupted: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """The harvest after its scan: every candidate imported (``say`` hears each), the suite certified (``shown``
    made for the exams pending) and each candidate's stage settled from the records; the funnel report. An
    interrupt keeps what was done: the rows are settled, ``interrupted`` gets the report so far, and it raises on."""
    h.check_suite()
    try:
        h.import_all(cands, say)
        pending = [r.exam for r in h.of(cands) if r.stage != "candidates"]
        if pending:
            show = shown(len(pending))
            envs = EnvImages(grading.store, store_options=grading.options, find_links=grading.find_links,
                             index_url=grading.index_url, stages=show.stages) if grading.store is not None else None
            try:
                certify_suite(h.suite, jobs=grading.jobs, out=h.certs, progress=show.line, environments=envs,
                              stages=show.stages, executor=grading.executor)
            finally:
                show.stop()
        h.settle(load_records(h.certs), cands)
    except BaseException as exc:
        if isinstance(exc, Exception):
            raise
        if (h.certs / "records").is_dir():  # an interrupt (Ctrl-C, SIGTERM): the funnel so far is said
            h.settle(load_records(h.certs), cands)
        interrupted(report(h, cands, grading.store, interrupted=True))
        raise
    return report(h, cands, grading.store)


@contextlib.contextmanager
def locked(certs: Path) -> Iterator[None]:
    """One harvest at a time on ``certs`` (a second one would overwrite the first's rows): exit 2 otherwise."""
    certs.mkdir(parents=True, exist_ok=True)
    fd = os.open(certs / ".harvest.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"exam harvest: another harvest is running on {certs} (its lock is held); wait for "
                             "it, or give another --out") from None
        yield
    finally:
        os.close(fd)
