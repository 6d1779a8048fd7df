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
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acx_oci.crypto.digest import sha256_digest
from acx_oci.crypto.jcs import canonical
from acx_oci.crypto.seal import Recipient, seal, unseal
from acx_oci.errors import IntegrityError, UsageError
from acx_oci.files import load_json_file, read_bytes
from acx_oci.jsonio import validate
from acx_oci.model.capability import make_record, parse_capability
from acx_oci.oci.model import ARTIFACT_BENCHMARK, EMPTY_JSON, MEDIA_EMPTY, Descriptor, Manifest, build_manifest
from acx_oci.oci.store import Store

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

SEAL_INFO = b"acx-oci/benchmark-held-out-slice/v1"
SEAL_KEY_FILE = "seal.key"
SUITE_FILE = "benchmark.json"
MAX_SLICE_BYTES = 32 * 1024 * 1024

DEMO_ID = "acx-bench-dag-de"
DEMO_VERSION = "2026.07.1"
DEMO_CAPABILITY = "build-dag[snowflake+airflow+dbt]@data-engineering"
DEMO_TASKS = 160
DEMO_MIN_DIFFICULTY = 15.0
DEMO_MAX_DIFFICULTY = 48.0
DEMO_HELD_OUT_FRACTION = 0.6

_META_KEYS = ("schema", "id", "version", "name", "description", "capability", "heldOutFraction")


@dataclass(frozen=True)
class Benchmark:
    """A whole suite: metadata plus every task (inline form), tasks sorted by id."""

    meta: dict[str, Any]
    tasks: tuple[dict[str, Any], ...]

    @property
    def id(self) -> str:
        return str(self.meta["id"])

    @property
    def version(self) -> str:
        return str(self.meta["version"])

    @property
    def capability(self) -> dict[str, Any]:
        cap: dict[str, Any] = self.meta["capability"]
        return cap

    @property
    def capability_id(self) -> str:
        return str(self.capability["id"])

    @property
    def held_out_fraction(self) -> float:
        return float(self.meta["heldOutFraction"])

    def document(self) -> dict[str, Any]:
        return {**self.meta, "tasks": list(self.tasks)}

    @property
    def digest(self) -> str:
        """benchmarkDigest: commits to the whole suite, held-out content included."""
        return sha256_digest(canonical(self.document()))

    def task(self, task_id: str) -> dict[str, Any]:
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
    return min(total, max(0, math.floor(total * fraction + 0.5)))


def split_rank(seal_key: bytes, task_id: str) -> str:
    return hmac.new(seal_key, b"acx-split|" + task_id.encode("utf-8"), hashlib.sha256).hexdigest()


def split(bench: Benchmark, seal_key: bytes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(public, held-out), each sorted by id; deterministic in (suite, seal key)."""
    if len(seal_key) < 16:
        raise UsageError("seal key: expected at least 16 bytes")
    ranked = sorted(bench.tasks, key=lambda t: split_rank(seal_key, t["id"]))
    n = held_out_count(len(ranked), bench.held_out_fraction)
    held = sorted(ranked[:n], key=lambda t: t["id"])
    public = sorted(ranked[n:], key=lambda t: t["id"])
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
        tasks.append({"id": tid, "difficulty": difficulty, "prompt": prompt,
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


# --- the suite directory ---------------------------------------------------------------------------------


def write_suite_dir(out: Path, doc: dict[str, Any], seal_key: bytes | None = None) -> tuple[Path, Path]:
    """Write ``benchmark.json`` and a fresh random ``seal.key`` (mode 0600; the split's secret)."""
    import json

    out.mkdir(parents=True, exist_ok=True)
    suite, key = out / SUITE_FILE, out / SEAL_KEY_FILE
    for p in (suite, key):
        if p.exists():
            raise UsageError(f"refusing to overwrite existing {p}")
    suite.write_text(json.dumps(doc, indent=2) + "\n", "utf-8")
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write((seal_key or os.urandom(32)).hex() + "\n")
    return suite, key


def _read_tree(root: Path, what: str) -> dict[str, str]:
    if not root.is_dir():
        return {}
    out: dict[str, str] = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            try:
                out[p.relative_to(root).as_posix()] = p.read_text("utf-8")
            except UnicodeDecodeError:
                raise UsageError(f"{what}: {p} is not UTF-8 text") from None
    return out


def _expand_task(entry: dict[str, Any], base: Path, common: dict[str, str]) -> dict[str, Any]:
    """``{"id", "difficulty", "dir"}`` -> inline task from ``dir/{prompt.md,workspace/,hidden/,task.json}``."""
    if "dir" not in entry:
        return entry
    d = (base / str(entry["dir"])).resolve()
    if base.resolve() not in d.parents:
        raise UsageError(f"benchmark task {entry.get('id')}: dir {entry['dir']!r} leaves the suite directory")
    extra = load_json_file(d / "task.json", "task.json") if (d / "task.json").exists() else {}
    hidden = {**common, **_read_tree(d / "hidden", f"task {entry.get('id')} hidden")}
    task = {k: v for k, v in entry.items() if k != "dir"}
    task["prompt"] = (d / "prompt.md").read_text("utf-8")
    task["workspace"] = {"files": _read_tree(d / "workspace", f"task {entry.get('id')} workspace")}
    task["grader"] = {"kind": "pytest", "files": hidden, "digest": grader_digest(hidden), **extra.get("grader", {})}
    task.update({k: v for k, v in extra.items() if k != "grader"})
    return task


def load_suite_dir(directory: Path) -> tuple[Benchmark, bytes]:
    """Read ``benchmark.json`` (expanding ``dir`` tasks) and ``seal.key`` (hex)."""
    doc = load_json_file(directory / SUITE_FILE, "benchmark suite")
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), list):
        raise UsageError(f"benchmark suite ({directory / SUITE_FILE}): expected an object with a tasks array")
    common = _read_tree(directory / str(doc.pop("graderCommon")), "grader common") if "graderCommon" in doc else {}
    doc["tasks"] = [_expand_task(t, directory, common) if isinstance(t, dict) else t for t in doc["tasks"]]
    bench = from_document(doc, f"benchmark suite ({directory / SUITE_FILE})")
    raw = read_bytes(directory / SEAL_KEY_FILE, "seal key", 4096).strip()
    try:
        key = bytes.fromhex(raw.decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        raise UsageError(f"seal key ({directory / SEAL_KEY_FILE}): expected hex") from None
    if len(key) < 16:
        raise UsageError(f"seal key ({directory / SEAL_KEY_FILE}): expected at least 16 bytes")
    return bench, key


# --- the published form ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Published:
    """The three layers a benchmark artifact carries, as exact bytes."""

    descriptor: bytes
    public_slice: bytes
    sealed_slice: bytes
    descriptor_doc: dict[str, Any]


def publish_layers(bench: Benchmark, seal_key: bytes, recipients: list[Recipient]) -> Published:
    public, held = split(bench, seal_key)
    held_ids = [t["id"] for t in held]
    public_doc = {"schema": PUBLIC_SCHEMA, "benchmark": bench.id, "version": bench.version, "tasks": public}
    held_doc = {"schema": HELD_OUT_SCHEMA, "benchmark": bench.id, "version": bench.version,
                "commitmentKey": commitment_key(seal_key).hex(), "tasks": held}
    descriptor = {
        "schema": DESCRIPTOR_SCHEMA,
        "benchmark": {k: v for k, v in bench.meta.items()},
        "taskCount": len(bench.tasks),
        "publicCount": len(public),
        "heldOutCount": len(held),
        "heldOutSliceDigest": held_out_slice_digest(held_ids),
        "benchmarkDigest": bench.digest,
        "sealedTo": [r.kid for r in recipients],
    }
    sealed = seal(canonical(held_doc), recipients, SEAL_INFO)
    return Published(canonical(descriptor), canonical(public_doc), canonical(sealed), descriptor)


@dataclass(frozen=True)
class PushedBenchmark:
    manifest_digest: str
    benchmark_digest: str
    held_out_slice_digest: str
    reference: str


def push(store: Store, bench: Benchmark, seal_key: bytes, recipients: list[Recipient],
         tag: str | None) -> PushedBenchmark:
    """Push config ``{}`` first (Distribution insists), then the layers, then the manifest."""
    pub = publish_layers(bench, seal_key, recipients)
    store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    layers = [
        store.push_blob(pub.descriptor, MEDIA_DESCRIPTOR, {"org.opencontainers.image.title": "benchmark.json"}),
        store.push_blob(pub.public_slice, MEDIA_PUBLIC, {"org.opencontainers.image.title": "public-slice.json"}),
        store.push_blob(pub.sealed_slice, MEDIA_SEALED, {"org.opencontainers.image.title": "held-out.sealed.json"}),
    ]
    d = pub.descriptor_doc
    manifest = build_manifest(ARTIFACT_BENCHMARK, layers, annotations={
        ANN_ID: bench.id, ANN_VERSION: bench.version, ANN_CAPABILITY: bench.capability_id,
        ANN_DIGEST: d["benchmarkDigest"], ANN_HELD_OUT: d["heldOutSliceDigest"],
    })
    desc = store.push_manifest(manifest, "application/vnd.oci.image.manifest.v1+json", tag)
    ref = store.reference.with_tag(tag).with_digest(desc.digest) if tag else store.reference.with_digest(desc.digest)
    return PushedBenchmark(desc.digest, d["benchmarkDigest"], d["heldOutSliceDigest"], str(ref))


@dataclass(frozen=True)
class RemoteBenchmark:
    """What anyone can read of a pushed benchmark: manifest, descriptor, public slice, sealed bytes."""

    manifest: Manifest
    descriptor: dict[str, Any]
    public_tasks: list[dict[str, Any]]
    sealed: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.descriptor["benchmark"]["id"])

    @property
    def version(self) -> str:
        return str(self.descriptor["benchmark"]["version"])

    @property
    def capability(self) -> dict[str, Any]:
        cap: dict[str, Any] = self.descriptor["benchmark"]["capability"]
        return cap

    def summary(self) -> dict[str, Any]:
        d = self.descriptor
        return {"id": self.id, "version": self.version, "manifestDigest": self.manifest.digest,
                "taskCount": d["taskCount"], "publicCount": d["publicCount"], "heldOutCount": d["heldOutCount"],
                "heldOutSliceDigest": d["heldOutSliceDigest"], "benchmarkDigest": d["benchmarkDigest"],
                "capability": self.capability, "sealedTo": d["sealedTo"]}


def _layer(manifest: Manifest, media_type: str, where: str) -> Descriptor:
    found = [layer for layer in manifest.layers if layer.media_type == media_type]
    if len(found) != 1:
        raise UsageError(f"{where}: expected exactly one {media_type} layer, found {len(found)}")
    return found[0]


def _json_blob(store: Store, desc: Descriptor, what: str) -> Any:
    from acx_oci.jsonio import parse_json

    return parse_json(store.fetch_blob(desc.digest, MAX_SLICE_BYTES), what)


def fetch(store: Store, target: str) -> RemoteBenchmark:
    """Read a benchmark artifact (no secrets needed); every layer is digest-checked by the store."""
    where = str(store.reference)
    manifest = store.fetch_manifest(target)
    if manifest.artifact_type != ARTIFACT_BENCHMARK:
        raise UsageError(f"{where}: expected artifactType {ARTIFACT_BENCHMARK}, found {manifest.artifact_type}")
    descriptor = _json_blob(store, _layer(manifest, MEDIA_DESCRIPTOR, where), "benchmark descriptor")
    validate(descriptor, SCHEMA_FILE, f"benchmark descriptor of {where}")
    public = _json_blob(store, _layer(manifest, MEDIA_PUBLIC, where), "benchmark public slice")
    validate(public, SCHEMA_FILE, f"benchmark public slice of {where}")
    sealed = _json_blob(store, _layer(manifest, MEDIA_SEALED, where), "benchmark sealed slice")
    if not isinstance(sealed, dict):
        raise UsageError(f"{where}: sealed slice is not a JSON object")
    if public["benchmark"] != descriptor["benchmark"]["id"] or public["version"] != descriptor["benchmark"]["version"]:
        raise IntegrityError(f"{where}: public slice names a different benchmark than the descriptor")
    return RemoteBenchmark(manifest, descriptor, list(public["tasks"]), sealed)


@dataclass(frozen=True)
class Unsealed:
    """The verifier's view: the whole suite re-assembled and checked against the published digests."""

    bench: Benchmark
    held_out: list[dict[str, Any]]
    commitment_key: bytes
    held_out_slice_digest: str
    manifest_digest: str
    held_out_doc: dict[str, Any]


def unseal_remote(remote: RemoteBenchmark, ident: Any) -> Unsealed:
    """Unseal, then recompute heldOutSliceDigest and benchmarkDigest; any mismatch fails closed."""
    from acx_oci.jsonio import parse_json

    plain = unseal(remote.sealed, ident, SEAL_INFO)
    held_doc = parse_json(plain, "unsealed held-out slice")
    validate(held_doc, SCHEMA_FILE, "unsealed held-out slice")
    if held_doc["benchmark"] != remote.id or held_doc["version"] != remote.version:
        raise IntegrityError("unsealed held-out slice names a different benchmark")
    held = list(held_doc["tasks"])
    held_ids = [t["id"] for t in held]
    if set(held_ids) & {t["id"] for t in remote.public_tasks}:
        raise IntegrityError("benchmark: a task is in both the public and the held-out slice")
    d = remote.descriptor
    hosd = held_out_slice_digest(held_ids)
    if hosd != d["heldOutSliceDigest"]:
        raise IntegrityError(f"benchmark: held-out slice digest {hosd} does not match the published "
                             f"{d['heldOutSliceDigest']}")
    bench = from_document({**d["benchmark"], "tasks": remote.public_tasks + held}, "re-assembled benchmark")
    if bench.digest != d["benchmarkDigest"]:
        raise IntegrityError(f"benchmark: re-assembled suite digests to {bench.digest}, the descriptor says "
                             f"{d['benchmarkDigest']}")
    if len(held) != d["heldOutCount"] or len(bench.tasks) != d["taskCount"]:
        raise IntegrityError("benchmark: task counts do not match the descriptor")
    try:
        ckey = bytes.fromhex(held_doc["commitmentKey"])
    except ValueError:
        raise UsageError("unsealed held-out slice: commitmentKey is not hex") from None
    return Unsealed(bench, sorted(held, key=lambda t: t["id"]), ckey, hosd, remote.manifest.digest, held_doc)
