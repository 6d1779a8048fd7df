"""Benchmarks: a versioned task suite, split public / held-out, the held-out part sealed.

The split is a pure function of the suite and a secret *seal key*: each task's
rank is HMAC-SHA256(seal key, task id), and the lowest ranks are held out. So
the same suite and key always hold out the same tasks, and without the key no
one can predict which. Only the public slice travels in the clear; the
held-out slice is sealed to verifiers (``seal.py``) together with the key
that makes task commitments (so game records can name a task without
revealing it).

Two digests are published:

* ``heldOutSliceDigest`` = sha256(JCS(sorted held-out task ids)) - lets an
  auditor holding the slice confirm which tasks a credential was earned on;
* ``benchmarkDigest`` = sha256(JCS(suite)), the suite being the metadata plus
  *every* task (held-out content included), sorted by id - what trust files
  and credentials pin. A verifier recomputes it from the public slice and the
  unsealed held-out slice before it runs anything.

The on-disk suite form (``benchmark.json`` + ``seal.key``) may abbreviate a
task as ``{"id", "difficulty", "dir"}``; :func:`load_suite_dir` expands it
into the inline form the digests are computed over.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import IntegrityError, UsageError
from acx_oci.jsonio import validate
from acx_oci.model.capability import make_record, parse_capability

SUITE_SCHEMA = "acx.benchmark/1"
PUBLIC_SCHEMA = "acx.benchmark.public-slice/1"
HELD_OUT_SCHEMA = "acx.benchmark.held-out-slice/1"
DESCRIPTOR_SCHEMA = "acx.benchmark.descriptor/1"
SCHEMA_FILE = "benchmark.schema.json"

MEDIA_DESCRIPTOR = "application/vnd.acx.benchmark.descriptor.v1+json"
MEDIA_PUBLIC = "application/vnd.acx.benchmark.public-slice.v1+json"
MEDIA_SEALED = "application/vnd.acx.benchmark.sealed-slice.v1+json"
ANN_ID = "dev.acx.benchmark.id"
ANN_VERSION = "dev.acx.benchmark.version"
ANN_CAPABILITY = "dev.acx.benchmark.capability"
ANN_DIGEST = "dev.acx.benchmark.digest"
ANN_HELD_OUT = "dev.acx.benchmark.held-out-slice-digest"
# certified (a signed certification referrer exists) | uncertified-allowed | not-exam-form
ANN_CERTIFICATION = "dev.acx.benchmark.exam-certification"

SEAL_INFO = b"acx-oci/benchmark-held-out-slice/v1"
SEAL_KEY_FILE = "seal.key"
SUITE_FILE = "benchmark.json"
MAX_SLICE_BYTES = 32 * 1024 * 1024

DEMO_ID = "acx-bench-dag-de"
DEMO_VERSION = "2026.07.1"
DEMO_CAPABILITY = "build-dag[snowflake+airflow+dbt]@data-engineering"
DEMO_TASKS = 160
DEMO_FIRST_PUBLISHED = date(2026, 1, 1)  # dag-0001's publishedAt; dag-N is N-1 days later
DEMO_MIN_DIFFICULTY = 15.0
DEMO_MAX_DIFFICULTY = 48.0
DEMO_HELD_OUT_FRACTION = 0.6

_META_KEYS = ("schema", "id", "version", "name", "description", "capability", "heldOutFraction", "environment")


@dataclass(frozen=True)
class Benchmark:
    """A whole suite: metadata plus every task (inline form), tasks sorted by id."""

    meta: dict[str, Any]
    tasks: tuple[dict[str, Any], ...]

    @property
    def id(self) -> str:
        """The suite's id, as credentials and the ``benchmark`` ref name it."""
        return str(self.meta["id"])

    @property
    def version(self) -> str:
        """The suite's version: a new version is a new suite, rated apart."""
        return str(self.meta["version"])

    @property
    def capability(self) -> dict[str, Any]:
        """The normalized capability record the suite measures (``capability_record``'s form)."""
        cap: dict[str, Any] = self.meta["capability"]
        return cap

    @property
    def capability_id(self) -> str:
        """The ``acx-cap:`` id that ties this suite to a cartridge's capability claim."""
        return str(self.capability["id"])

    @property
    def held_out_fraction(self) -> float:
        """The share of tasks held out (sealed); ``held_out_count`` rounds it."""
        return float(self.meta["heldOutFraction"])

    def document(self) -> dict[str, Any]:
        """The inline suite document (meta and every task) that ``digest`` commits to."""
        return {**self.meta, "tasks": list(self.tasks)}

    @property
    def digest(self) -> str:
        """benchmarkDigest: commits to the whole suite, held-out content included."""
        return sha256_digest(canonical(self.document()))

    def task(self, task_id: str) -> dict[str, Any]:
        """One task by id; UsageError naming the suite if it has none."""
        for t in self.tasks:
            if t["id"] == task_id:
                return t
        raise UsageError(f"benchmark {self.id}: no task {task_id!r}")


def capability_record(text_or_obj: str | dict[str, Any]) -> dict[str, Any]:
    """The benchmark's ``capability``: {taskType, stack, domain, id}, normalized like a cartridge's."""
    if isinstance(text_or_obj, str):
        rec = parse_capability(text_or_obj)
    else:
        rec = make_record(str(text_or_obj.get("taskType")), list(text_or_obj.get("stack") or []),
                          text_or_obj.get("domain"))
        if text_or_obj.get("id") not in (None, rec.id):
            raise UsageError(f"benchmark capability: id {text_or_obj.get('id')} is not the id of its "
                             f"(taskType, stack, domain), {rec.id}")
    out: dict[str, Any] = {"taskType": rec.task_type, "stack": list(rec.stack)}
    if rec.domain:
        out["domain"] = rec.domain
    out["id"] = rec.id
    return out


def capability_display(cap: dict[str, Any]) -> str:
    """``taskType[stack]@domain`` for messages; not an id (``capability_id`` is)."""
    text = f"{cap['taskType']}[{'+'.join(cap['stack'])}]"
    return text + (f"@{cap['domain']}" if cap.get("domain") else "")


def grader_digest(files: dict[str, str]) -> str:
    """Pin a grader's files: sha256 over the JCS of {path: content}."""
    return sha256_digest(canonical(files))


def _check_task(task: dict[str, Any], where: str) -> None:
    grader = task["grader"]
    if grader["kind"] == "pytest":
        expected = grader_digest(grader["files"])
        if grader.get("digest") not in (None, expected):
            raise IntegrityError(f"{where}: grader files digest {expected} does not match the pinned "
                                 f"{grader.get('digest')}")


def from_document(doc: Any, what: str = "benchmark") -> Benchmark:
    """Validate an inline suite document and normalize it (capability id, task order)."""
    validate(doc, SCHEMA_FILE, what)
    if doc.get("schema") != SUITE_SCHEMA:
        raise UsageError(f"{what}: expected schema {SUITE_SCHEMA}, found {doc.get('schema')!r}")
    meta = {k: doc[k] for k in _META_KEYS if k in doc}
    meta["capability"] = capability_record(doc["capability"])
    tasks = sorted((dict(t) for t in doc["tasks"]), key=lambda t: t["id"])
    ids = [t["id"] for t in tasks]
    if len(set(ids)) != len(ids):
        raise UsageError(f"{what}: duplicate task ids")
    for t in tasks:
        _check_task(t, f"{what} task {t['id']}")
        if t["grader"]["kind"] == "pytest" and "digest" not in t["grader"]:
            t["grader"] = {**t["grader"], "digest": grader_digest(t["grader"]["files"])}
    return Benchmark(meta, tuple(tasks))


# --- the split -------------------------------------------------------------------------------------------


def held_out_count(total: int, fraction: float) -> int:
    """The number of held-out tasks: ``fraction`` of ``total`` rounded half up, within 0..total."""
    return min(total, max(0, math.floor(total * fraction + 0.5)))


def split_rank(seal_key: bytes, task_id: str) -> str:
    """HMAC rank of a task under the seal key: orders the split so it cannot be predicted without the key."""
    return hmac.new(seal_key, b"acx-split|" + task_id.encode("utf-8"), hashlib.sha256).hexdigest()


def is_private(task: dict[str, Any]) -> bool:
    """Not publicly listable, or a customer's: never in the public slice, its id published only as a commitment."""
    c = task.get("classification") or {}
    return c.get("publiclyListable") is False or c.get("customerOwned") is True


def customer_of(task: dict[str, Any]) -> str | None:
    """The customer a customer-owned task belongs to ("" when it names none); None when it is not a customer's."""
    c = task.get("classification") or {}
    return str(c.get("customer") or "") if c.get("customerOwned") is True else None


def split(bench: Benchmark, seal_key: bytes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(public, held-out), each sorted by id; deterministic in (suite, seal key).

    Private tasks (:func:`is_private`) are always held out; the rest fill the held-out count in rank order.
    """
    if len(seal_key) < 16:
        raise UsageError("seal key: expected at least 16 bytes")
    ranked = sorted(bench.tasks, key=lambda t: split_rank(seal_key, t["id"]))
    n = held_out_count(len(ranked), bench.held_out_fraction)
    private = [t for t in ranked if is_private(t)]
    listable = [t for t in ranked if not is_private(t)]
    k = max(0, n - len(private))
    held = sorted(private + listable[:k], key=lambda t: t["id"])
    public = sorted(listable[k:], key=lambda t: t["id"])
    return public, held


def held_out_slice_digest(task_ids: list[str]) -> str:
    """sha256:hex(sha256(JCS(sorted held-out task ids)))."""
    return sha256_digest(canonical(sorted(task_ids)))


def commitment_key(seal_key: bytes) -> bytes:
    """The key for task commitments; derived, so handing it to verifiers does not reveal the split key."""
    return hmac.new(seal_key, b"acx-task-commitment/v1", hashlib.sha256).digest()


# --- the demo suite ---------------------------------------------------------------------------------------

_SOURCES = ("postgres orders", "s3 clickstream", "salesforce accounts", "kafka payments", "stripe invoices",
            "zendesk tickets", "hubspot contacts", "mysql inventory")
_CADENCES = ("hourly", "daily", "weekly")
_EXTRAS = ("with an SLA alert", "with data-quality tests on every model", "with backfill support",
           "with incremental dbt models", "with a late-arriving-data sensor", "with idempotent retries")


def demo_document() -> dict[str, Any]:
    """``acx-bench-dag-de@2026.07.1``: 160 synthetic DAG tasks, difficulties evenly spread over 15-48."""
    tasks = []
    for i in range(1, DEMO_TASKS + 1):
        tid = f"dag-{i:04d}"
        difficulty = round(DEMO_MIN_DIFFICULTY + (DEMO_MAX_DIFFICULTY - DEMO_MIN_DIFFICULTY) * (i - 1)
                           / (DEMO_TASKS - 1), 4)
        source = _SOURCES[(i * 7) % len(_SOURCES)]
        prompt = (f"Build an Airflow DAG that ingests {source} {_CADENCES[i % 3]} into Snowflake and runs the "
                  f"dbt project downstream, {_EXTRAS[(i * 5) % len(_EXTRAS)]}.")
        expected = sha256_digest(f"{DEMO_ID}@{DEMO_VERSION}/{tid}/expected-dag.py".encode())
        # A real date for every task (published over the first half of 2026, before the suite's July
        # release), so a model's training cutoff can slice it and a consumer can require post-cutoff games.
        published = (DEMO_FIRST_PUBLISHED + timedelta(days=i - 1)).isoformat()
        tasks.append({"id": tid, "difficulty": difficulty, "prompt": prompt, "publishedAt": published,
                      "grader": {"kind": "reference", "artifacts": {"dags/pipeline.py": expected}}})
    return {
        "schema": SUITE_SCHEMA,
        "id": DEMO_ID,
        "version": DEMO_VERSION,
        "name": "ACX DAG construction (Airflow + dbt on Snowflake)",
        "description": "Reference suite for the provable-level protocol; graded by the reference solver.",
        "capability": capability_record(DEMO_CAPABILITY),
        "heldOutFraction": DEMO_HELD_OUT_FRACTION,
        "tasks": tasks,
    }


def post_cutoff(tasks: list[dict[str, Any]], cutoff: date | None) -> list[dict[str, Any]]:
    """The held-out tasks the draw may take given this training cutoff (DESIGN.md, "Exams, environments").

    Tasks published strictly after the cutoff are drawn, and every task when there is no cutoff. Once a cutoff
    is known an undated task is never drawn (issue 34): nothing shows the model did not see it in training.
    """
    if cutoff is None:
        return list(tasks)
    return [task for task in tasks if dated_after(task, cutoff)]


def dated_after(task: dict[str, Any], cutoff: date | None) -> bool:
    """Whether the task is *proven* post-cutoff: dated strictly after a known cutoff (undated: never)."""
    published = task.get("publishedAt")
    return cutoff is not None and published is not None and date.fromisoformat(str(published)) > cutoff


def rateable(tasks: list[dict[str, Any]]) -> int:
    """How many tasks can be rated: impossible exams are cheating canaries, drawn but never rated."""
    return sum(not t.get("impossible") for t in tasks)
