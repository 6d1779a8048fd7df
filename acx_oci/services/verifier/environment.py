"""Which environment image each game of an attest runs in: the task's, else the benchmark's, checked against the ROM.

A benchmark declares ``environment: {image: REF@sha256:…}`` (in ``benchmark.json``, carried in the published
descriptor and inside the benchmark digest); a task may pin its own (``environment: {image, specDigest}``, set by
``benchmark push`` from the image its exam was certified in, inside the sealed slice and the benchmark digest);
a ROM's runtime may require ``environment: {imageDigest: sha256:…}``. The games, their grading and the
containment probes then run with that image's unpacked root as ``/`` (see :mod:`acx_oci.envimage`); records and
the credential name the image manifest digest. One attest reads at most :data:`MAX_IMAGES` distinct images.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from acx_oci.errors import UsageError
from acx_oci.oci import parse_reference


def benchmark_image(bench_meta: dict[str, Any]) -> str | None:
    """The pinned image reference a benchmark declares, or None (games run on the host's /usr)."""
    env = bench_meta.get("environment") or {}
    image = env.get("image") if isinstance(env, dict) else None
    return str(image) if image else None


def task_image(task: dict[str, Any], bench_meta: dict[str, Any]) -> str | None:
    """The image a task's game runs in: its own pinned image, else the benchmark's, else None (the host's /usr)."""
    env = task.get("environment")
    image = env.get("image") if isinstance(env, dict) else None
    return str(image) if image else benchmark_image(bench_meta)


def draw_images(tasks: Iterable[dict[str, Any]], bench_meta: dict[str, Any]) -> list[str | None]:
    """The distinct images ``tasks`` play in, in first-use order (None: the host's /usr)."""
    out: list[str | None] = []
    for t in tasks:
        image = task_image(t, bench_meta)
        if image not in out:
            out.append(image)
    return out


def has_task_images(tasks: Iterable[dict[str, Any]]) -> bool:
    """Whether any task pins its own environment image (then each game is routed to its image's solver)."""
    return any(isinstance(t.get("environment"), dict) and t["environment"].get("image") for t in tasks)


def rom_image_digest(runtime: dict[str, Any] | None) -> str | None:
    """The environment image digest the ROM's runtime demands, if it pins one."""
    env = (runtime or {}).get("environment") or {}
    digest = env.get("imageDigest") if isinstance(env, dict) else None
    return str(digest) if digest else None


def benchmark_image_problems(bench_meta: dict[str, Any]) -> list[str]:
    """What the descriptor alone refuses: a benchmark image that is not a reference pinned by digest."""
    image = benchmark_image(bench_meta)
    if image is None:
        return []
    try:
        declared = parse_reference(image).digest
    except UsageError as exc:
        return [f"environment: the benchmark's image {image!r} is not a pinned reference ({exc})"]
    return [] if declared is not None else [f"environment: the benchmark's image {image!r} is not pinned by digest"]


def environment_problems(bench_meta: dict[str, Any], runtime: dict[str, Any] | None) -> list[str]:
    """Refusal reasons: a ROM that requires an image the benchmark does not declare (or declares another)."""
    problems = benchmark_image_problems(bench_meta)
    if problems:
        return problems
    image, wanted = benchmark_image(bench_meta), rom_image_digest(runtime)
    declared = parse_reference(image).digest if image is not None else None
    if wanted is None or wanted == declared:
        return []
    if declared is None:
        return [f"environment: the ROM requires image {wanted}, but the benchmark declares no environment image"]
    return [f"environment: the ROM requires image {wanted}, but the benchmark declares {declared}"]


MAX_IMAGES = 16  # distinct environment images one attest pulls, unpacks and proves (each within the pull bounds)


def _digest_of(image: str) -> str | None:
    try:
        return parse_reference(image).digest
    except UsageError:
        return None


def draw_environment_problems(tasks: Sequence[dict[str, Any]], bench_meta: dict[str, Any],
                              runtime: dict[str, Any] | None, *, executor: bool = False) -> list[str]:
    """Refusal reasons for the held-out tasks' images, before any attempt: a task image not pinned by digest,
    more than :data:`MAX_IMAGES` images, per-task images on a cluster, or a ROM pinning one image while
    tasks need another. Without per-task images this is :func:`environment_problems` (the benchmark's own)."""
    if not has_task_images(tasks):
        return environment_problems(bench_meta, runtime)
    images = draw_images(tasks, bench_meta)
    unpinned = sorted({i for i in images if i is not None and _digest_of(i) is None})
    if unpinned:
        return [f"environment: a task's image {unpinned[0]!r} is not pinned by digest (expected REF@sha256:…)"]
    if len(images) > MAX_IMAGES:
        return [f"environment: the benchmark's held-out tasks need {len(images)} distinct images; "
                f"one attest reads at most {MAX_IMAGES}"]
    if executor:
        return ["environment: per-exam environment images play on local games only; drop --executor"]
    wanted = rom_image_digest(runtime)
    if wanted is None:
        return []
    others = sorted({str(_digest_of(i)) if i is not None else "the host (no image)" for i in images} - {wanted})
    if not others:
        return []
    return [f"environment: the ROM requires image {wanted}, but the benchmark's tasks need {len(others)} other "
            f"image(s) ({', '.join(others[:3])})"]


def image_digests(predicates: Iterable[dict[str, Any]]) -> list[str]:
    """The image digests games ran in (from each record's ``containment.imageDigest``), sorted."""
    out = set()
    for pred in predicates:
        containment = pred.get("containment")
        if isinstance(containment, dict) and containment.get("imageDigest"):
            out.add(str(containment["imageDigest"]))
    return sorted(out)
