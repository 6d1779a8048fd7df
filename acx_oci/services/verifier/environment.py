"""Which environment image an attest runs in: the benchmark's declaration, checked against the ROM's demand.

A benchmark declares ``environment: {image: REF@sha256:…}`` (in ``benchmark.json``, carried in the published
descriptor and inside the benchmark digest); a ROM's runtime may require ``environment: {imageDigest:
sha256:…}``. The games, their grading and the containment probes then run with that image's unpacked root as
``/`` (see :mod:`acx_oci.envimage`); records and the credential name the image manifest digest.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from acx_oci.errors import UsageError
from acx_oci.oci.ref import parse_reference


def benchmark_image(bench_meta: dict[str, Any]) -> str | None:
    """The pinned image reference a benchmark declares, or None (games run on the host's /usr)."""
    env = bench_meta.get("environment") or {}
    image = env.get("image") if isinstance(env, dict) else None
    return str(image) if image else None


def rom_image_digest(runtime: dict[str, Any] | None) -> str | None:
    """The environment image digest the ROM's runtime demands, if it pins one."""
    env = (runtime or {}).get("environment") or {}
    digest = env.get("imageDigest") if isinstance(env, dict) else None
    return str(digest) if digest else None


def environment_problems(bench_meta: dict[str, Any], runtime: dict[str, Any] | None) -> list[str]:
    """Refusal reasons: a ROM that requires an image the benchmark does not declare (or declares another)."""
    image, wanted = benchmark_image(bench_meta), rom_image_digest(runtime)
    if image is not None:
        try:
            declared = parse_reference(image).digest
        except UsageError as exc:
            return [f"environment: the benchmark's image {image!r} is not a pinned reference ({exc})"]
        if declared is None:
            return [f"environment: the benchmark's image {image!r} is not pinned by digest"]
    else:
        declared = None
    if wanted is None or wanted == declared:
        return []
    if declared is None:
        return [f"environment: the ROM requires image {wanted}, but the benchmark declares no environment image"]
    return [f"environment: the ROM requires image {wanted}, but the benchmark declares {declared}"]


def image_digests(predicates: Iterable[dict[str, Any]]) -> list[str]:
    """The image digests games ran in (from each record's ``containment.imageDigest``), sorted."""
    out = set()
    for pred in predicates:
        containment = pred.get("containment")
        if isinstance(containment, dict) and containment.get("imageDigest"):
            out.add(str(containment["imageDigest"]))
    return sorted(out)
