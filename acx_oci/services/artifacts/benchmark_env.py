"""Per-exam environment images in a pushed benchmark: each exam plays where it was certified.

An exam that carries an environment spec (``env.json``) and was certified in that spec's image (``exam certify
--environments``: the record's ``freeze.imageDigest`` and ``freeze.environment.specDigest``) gets the image
pinned in its task, ``environment: {image: REPO@sha256:…, specDigest}``: inside the sealed slice and the
benchmark digest, so a verifier plays it in exactly that image. The image is copied by digest from the
environment store into the benchmark's own repository (tagged ``env-<spec hex[:16]>`` so a registry's garbage
collection keeps it), every manifest and blob digest-verified: a verifier who can read the benchmark can read
its images.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from acx_oci.envimage import pyenv
from acx_oci.errors import AcxError, IntegrityError, UsageError
from acx_oci.files import load_yaml_or_json_inside, read_bytes_in
from acx_oci.jsonio import parse_json
from acx_oci.model import ENV_FILE, SUITE_FILE, Benchmark, CertificationRecord, from_document
from acx_oci.oci import (
    CopyPlan,
    Store,
    StoreOptions,
    copy_blobs,
    open_store,
    parse_reference,
    plan_tree,
    push_manifests,
)
from acx_oci.safetree import parts_of

TAG_PREFIX = "env-"
MAX_PUSHED_IMAGES = 16  # what one attest reads at most (services.verifier.environment.MAX_IMAGES)


@dataclass(frozen=True)
class EnvPins:
    """Per exam id, the image digest and spec digest to pin; the exams with a spec but no image in their record."""

    pins: dict[str, tuple[str, str]]
    unpinned: tuple[str, ...]

    def unpinned_line(self) -> str | None:
        """The one stderr line ``benchmark push`` prints when an exam with a spec was certified without it."""
        if not self.unpinned:
            return None
        shown = ", ".join(self.unpinned[:5]) + (f" and {len(self.unpinned) - 5} more" if len(self.unpinned) > 5 else "")
        return (f"benchmark push: {len(self.unpinned)} exam(s) carry env.json but their certification names no image "
                f"built from it ({shown}); they play in the benchmark's image or the verifier's /usr "
                "(certify with exam certify --environments to pin theirs)")


def exam_specs(directory: Path) -> dict[str, str]:
    """Per task id whose exam directory carries ``env.json``: the spec's digest (what its image is cached by)."""
    where = f"benchmark suite ({directory / SUITE_FILE})"
    doc = parse_json(read_bytes_in(directory, SUITE_FILE, "benchmark suite"), where)
    out: dict[str, str] = {}
    entries = doc.get("tasks") if isinstance(doc, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or "dir" not in entry:
            continue
        rel = "/".join(parts_of(str(entry["dir"]), f"benchmark task {entry.get('id')}: dir"))
        spec = load_yaml_or_json_inside(directory, f"{rel}/{ENV_FILE}", f"task {entry.get('id')} {ENV_FILE}")
        if spec is None:
            continue
        if not isinstance(spec, dict):
            raise UsageError(f"{directory / rel / ENV_FILE}: expected an object")
        try:
            out[str(entry.get("id"))] = pyenv.spec_digest(spec)
        except AcxError as exc:
            raise UsageError(f"{directory / rel / ENV_FILE}: {exc}") from None
    return out


def plan_pins(directory: Path, records: Mapping[str, CertificationRecord]) -> EnvPins:
    """Which exams get their certified image pinned: a spec and a record naming an image built from that spec."""
    pins: dict[str, tuple[str, str]] = {}
    unpinned: list[str] = []
    for eid, spec in sorted(exam_specs(directory).items()):
        rec = records.get(eid)
        freeze = rec.stage("freeze") if rec is not None else {}
        image = freeze.get("imageDigest")
        env = freeze.get("environment") if isinstance(freeze.get("environment"), dict) else {}
        built_for = env.get("specDigest") if env else None
        if not image or not built_for:
            unpinned.append(eid)
            continue
        if built_for != spec:
            raise IntegrityError(f"benchmark push: exam {eid}'s env.json digests to {spec}, but the image its "
                                 f"certification names was built for {built_for}; certify it again")
        pins[eid] = (str(image), str(built_for))
    if len({d for d, _ in pins.values()}) > MAX_PUSHED_IMAGES:
        raise UsageError(f"benchmark push: the exams need {len({d for d, _ in pins.values()})} distinct environment "
                         f"images; a verifier reads at most {MAX_PUSHED_IMAGES} per attest")
    return EnvPins(pins, tuple(unpinned))


def env_tag(spec_digest: str) -> str:
    """The tag that keeps a copied image in the benchmark's repository: ``env-`` and 16 hex of its spec digest."""
    return TAG_PREFIX + spec_digest.split(":", 1)[1][:16]


def copy_images(env_store: str, target: Store, pins: EnvPins, options: StoreOptions | None = None
                ) -> dict[str, str]:
    """Copy each pinned image by digest from ``env_store`` into ``target``; per image digest, its pinned reference
    there. Every manifest and blob is digest-verified on read, and the copy is read back by its digest."""
    if not pins.pins:
        return {}
    out: dict[str, str] = {}
    base = target.reference.with_tag(None)
    with open_store(parse_reference(env_store), options) as src:
        for eid, (digest, spec) in sorted(pins.pins.items()):
            plan = CopyPlan()
            try:
                item = plan_tree(src, digest, plan, tag=env_tag(spec))
            except AcxError as exc:
                raise UsageError(f"benchmark push: exam {eid}'s environment image {digest} cannot be read from "
                                 f"the environment store {env_store} ({exc}); name the store its certification "
                                 "used with --env-store") from None
            if item.digest != digest:
                raise IntegrityError(f"benchmark push: the environment store served {item.digest} for {digest}")
            copy_blobs(src, target, plan)
            push_manifests(target, plan)
            _raw, _mt, stored = target.fetch_manifest_raw(digest)  # read back, digest-verified by the store
            if stored != digest:
                raise IntegrityError(f"benchmark push: the copy of image {digest} reads back as {stored}")
            out[digest] = str(base.with_digest(digest))
    return out


def with_environments(bench: Benchmark, pins: EnvPins, refs: dict[str, str]) -> Benchmark:
    """The suite with each pinned exam's ``environment`` set (the benchmark digest then commits to it)."""
    if not pins.pins:
        return bench
    tasks = []
    for t in bench.tasks:
        pin = pins.pins.get(str(t["id"]))
        tasks.append({**t, "environment": {"image": refs[pin[0]], "specDigest": pin[1]}} if pin else t)
    return from_document({**bench.meta, "tasks": tasks}, "benchmark with environment images")
