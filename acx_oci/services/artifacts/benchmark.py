"""Benchmarks on disk and in a store: the suite directory, the published artifact, unsealing.

The suite itself (digests, the split, the demo suite) is :mod:`acx_oci.model.benchmark`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acx_oci.crypto import Recipient, canonical, unseal
from acx_oci.crypto.seal import seal
from acx_oci.errors import IntegrityError, UsageError
from acx_oci.files import (
    load_yaml_or_json_inside,
    read_bytes_in,
    read_bytes_inside,
    read_text_tree,
)
from acx_oci.jsonio import parse_json, validate
from acx_oci.model import (
    ANN_CAPABILITY,
    ANN_CERTIFICATION,
    ANN_DIGEST,
    ANN_HELD_OUT,
    DESCRIPTOR_SCHEMA,
    HELD_OUT_SCHEMA,
    MAX_SLICE_BYTES,
    MEDIA_DESCRIPTOR,
    MEDIA_PUBLIC,
    MEDIA_SEALED,
    PUBLIC_SCHEMA,
    SCHEMA_FILE,
    SEAL_INFO,
    SEAL_KEY_FILE,
    SUITE_FILE,
    Benchmark,
    CertificationRecord,
    commitment_key,
    customer_of,
    from_document,
    grader_digest,
    held_out_slice_digest,
    is_private,
    split,
    task_commitment,
)
from acx_oci.model.benchmark import ANN_ID, ANN_VERSION
from acx_oci.oci import ARTIFACT_BENCHMARK, EMPTY_JSON, MEDIA_EMPTY, Descriptor, Manifest, Store, build_manifest
from acx_oci.safetree import parts_of

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


def _expand_task(entry: dict[str, Any], base: Path, common: dict[str, str]) -> dict[str, Any]:
    """``{"id", "difficulty", "dir"}`` -> inline task from ``dir/{prompt.md,workspace/,hidden/,task.json}``.

    Every name is read inside the suite directory (:func:`acx_oci.files.read_text_tree`): a link is refused,
    never followed, so no host file can ride into a published slice.
    """
    if "dir" not in entry:
        return entry
    tid = entry.get("id")
    rel = "/".join(parts_of(str(entry["dir"]), f"benchmark task {tid}: dir"))
    if not rel:
        raise UsageError(f"benchmark task {tid}: dir {entry['dir']!r} is the suite directory itself")
    raw_extra = read_bytes_inside(base, f"{rel}/task.json", f"task {tid} task.json")
    extra = parse_json(raw_extra, f"task.json ({base / rel})") if raw_extra is not None else {}
    if not isinstance(extra, dict):
        raise UsageError(f"task {tid}: task.json ({base / rel}) is not an object")
    hidden = {**common, **read_text_tree(base, f"{rel}/hidden", f"task {tid} hidden")}
    task = {k: v for k, v in entry.items() if k != "dir"}
    prompt = read_bytes_inside(base, f"{rel}/prompt.md", f"task {tid} prompt.md")
    if prompt is None:
        raise UsageError(f"task {tid}: {base / rel / 'prompt.md'} not found")
    try:
        task["prompt"] = prompt.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"task {tid}: {base / rel / 'prompt.md'} is not UTF-8 text") from None
    task["workspace"] = {"files": read_text_tree(base, f"{rel}/workspace", f"task {tid} workspace")}
    task["grader"] = {"kind": "pytest", "files": hidden, "digest": grader_digest(hidden), **extra.get("grader", {})}
    task.update({k: v for k, v in extra.items() if k != "grader"})
    task.update(_exam_fields(base, rel, tid))
    return task


def _exam_fields(base: Path, rel: str, tid: Any) -> dict[str, Any]:
    """From an exam directory's ``exam.yaml``: ``publishedAt`` and ``impossible`` (the contract itself,
    the reference and the controls stay out of the task; ``acx-oci exam certify`` checks them)."""
    doc = load_yaml_or_json_inside(base, f"{rel}/exam.yaml", f"task {tid} exam.yaml")
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise UsageError(f"task {tid}: exam.yaml is not a mapping")
    out: dict[str, Any] = {}
    if "publishedAt" in doc:
        out["publishedAt"] = str(doc["publishedAt"])
    if doc.get("impossible") is True:
        out["impossible"] = True
    c = doc.get("classification")
    if not isinstance(c, dict):  # an exam nobody classified is never published as if it were public
        raise UsageError(f"task {tid}: exam.yaml states no classification ({str(c)[:40]!r}); state it "
                         "(classification: {publiclyListable, customerOwned}) or import again with --classification")
    if c.get("publiclyListable") is False or c.get("customerOwned") is True:
        # Only a non-default classification enters the task (and so the benchmark digest): it is enforced below.
        out["classification"] = {k: c[k] for k in ("publiclyListable", "customerOwned", "customer") if k in c}
    return out


def check_customers(bench: Benchmark, customer: str | None) -> list[str]:
    """The customer-owned exams ``benchmark push --customer`` allows; UsageError (one line) when one is not
    the named customer's, or a customer is named and owns nothing here."""
    owned = [(str(t["id"]), customer_of(t)) for t in bench.tasks if customer_of(t) is not None]
    wrong = [tid for tid, owner in owned if owner != customer]
    if wrong and customer is None:
        raise UsageError(f"benchmark push: {len(wrong)} exam(s) are customer-owned (first {wrong[0]}); push them "
                         "with --customer NAME, the name in their classification.customer")
    if wrong:
        raise UsageError(f"benchmark push: {len(wrong)} exam(s) are not owned by customer {customer!r} "
                         f"(first {wrong[0]}); one push carries one customer's exams")
    if customer is not None and not owned:
        raise UsageError(f"benchmark push: --customer {customer!r}, but no exam of the suite is customer-owned")
    return [tid for tid, _ in owned]


def exam_key(task: dict[str, Any], ckey: bytes) -> str:
    """How a published artifact names an exam: its id, or for a private one its task commitment."""
    return task_commitment(ckey, str(task["id"])) if is_private(task) else str(task["id"])


def publishable_records(records: Mapping[str, CertificationRecord], bench: Benchmark, seal_key: bytes
                        ) -> dict[str, dict[str, Any]]:
    """Certification records as they may be published: a private exam's keyed by its commitment and cut to
    what the summary reads (verdicts and the freeze hash; no id, test names or canary markers)."""
    ckey = commitment_key(seal_key)
    tasks = {str(t["id"]): t for t in bench.tasks}
    out: dict[str, dict[str, Any]] = {}
    for eid, rec in records.items():
        task = tasks.get(eid)
        if task is None or not is_private(task):
            out[eid] = rec.to_json()  # serialised once, as published
            continue
        key = exam_key(task, ckey)
        stages: dict[str, dict[str, Any]] = {s: {"ok": bool(v.get("ok"))} for s, v in rec["stages"].items()
                                             if isinstance(v, dict)}
        if "freeze" in stages:
            stages["freeze"]["freezeHash"] = rec.freeze_hash
        out[key] = {"exam": key, "redacted": True, "digest": rec.digest, "certified": rec.certified,
                    "impossible": rec.impossible, "stages": stages}
    return out


def load_suite_dir(directory: Path) -> tuple[Benchmark, bytes]:
    """Read ``benchmark.json`` (expanding ``dir`` tasks) and ``seal.key`` (hex)."""
    # The suite is the author's: its top-level files are read inside it too (a link there is refused).
    where = f"benchmark suite ({directory / SUITE_FILE})"
    doc = parse_json(read_bytes_in(directory, SUITE_FILE, "benchmark suite"), where)
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), list):
        raise UsageError(f"benchmark suite ({directory / SUITE_FILE}): expected an object with a tasks array")
    common = read_text_tree(directory, str(doc.pop("graderCommon")), "graderCommon") if "graderCommon" in doc else {}
    doc["tasks"] = [_expand_task(t, directory, common) if isinstance(t, dict) else t for t in doc["tasks"]]
    bench = from_document(doc, f"benchmark suite ({directory / SUITE_FILE})")
    raw = read_bytes_in(directory, SEAL_KEY_FILE, "seal key", 4096).strip()
    try:
        key = bytes.fromhex(raw.decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        raise UsageError(f"seal key ({directory / SEAL_KEY_FILE}): expected hex") from None
    if len(key) < 16:
        raise UsageError(f"seal key ({directory / SEAL_KEY_FILE}): expected at least 16 bytes")
    return bench, key


# --- the published form ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchmarkLayers:
    """The three layers a benchmark artifact carries, as exact bytes."""

    descriptor: bytes
    public_slice: bytes
    sealed_slice: bytes
    descriptor_doc: dict[str, Any]


def publish_layers(bench: Benchmark, seal_key: bytes, recipients: list[Recipient]) -> BenchmarkLayers:
    """Split and seal a suite into its three layers; the held-out tasks leave only sealed to ``recipients``."""
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
    return BenchmarkLayers(canonical(descriptor), canonical(public_doc), canonical(sealed), descriptor)


@dataclass(frozen=True)
class PushedBenchmark:
    """A pushed benchmark: the digests a trust file pins it by, and the manifest a certification refers to."""

    manifest_digest: str
    benchmark_digest: str
    held_out_slice_digest: str
    reference: str
    descriptor: Descriptor | None = None  # the benchmark manifest's descriptor (the certification's subject)


def push(store: Store, bench: Benchmark, seal_key: bytes, recipients: list[Recipient],
         tag: str | None, certification: str = "not-exam-form") -> PushedBenchmark:
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
        ANN_DIGEST: d["benchmarkDigest"], ANN_HELD_OUT: d["heldOutSliceDigest"], ANN_CERTIFICATION: certification,
    })
    desc = store.push_manifest(manifest, "application/vnd.oci.image.manifest.v1+json", tag)
    ref = store.reference.with_tag(tag).with_digest(desc.digest) if tag else store.reference.with_digest(desc.digest)
    return PushedBenchmark(desc.digest, d["benchmarkDigest"], d["heldOutSliceDigest"], str(ref), desc)


@dataclass(frozen=True)
class RemoteBenchmark:
    """What anyone can read of a pushed benchmark: manifest, descriptor, public slice, sealed bytes."""

    manifest: Manifest
    descriptor: dict[str, Any]
    public_tasks: list[dict[str, Any]]
    sealed: dict[str, Any]

    @property
    def id(self) -> str:
        """The suite's id as its descriptor states it."""
        return str(self.descriptor["benchmark"]["id"])

    @property
    def version(self) -> str:
        """The suite's version as its descriptor states it."""
        return str(self.descriptor["benchmark"]["version"])

    @property
    def capability(self) -> dict[str, Any]:
        """The capability record the suite measures, as its descriptor states it."""
        cap: dict[str, Any] = self.descriptor["benchmark"]["capability"]
        return cap

    def summary(self) -> dict[str, Any]:
        """The ``benchmark inspect`` summary: counts, digests, capability and recipients; never a held-out task."""
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

    return parse_json(store.fetch_blob(desc.digest, MAX_SLICE_BYTES, size=desc.size), what)


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
