"""Each exam's environment image for certification: built or pulled from its ``env.json``, cached by spec digest.

An imported exam carries an environment spec (:mod:`acx_oci.services.exams.envspec`). With ``exam certify
--environments`` its chain runs inside the image made from that spec — the venv's Python and pytest grade, never
the host's — and the record names the image and the Python and package versions in it. Images live in an image
store (``oci:DIR`` or ``registry/repo``) under the tag ``spec-<digest>`` (:func:`acx_oci.envimage.pyenv.ensure_image`),
so one spec is resolved and built once and every later run, on any machine with the store, pulls it by digest.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acx_oci.envimage import cache as envcache
from acx_oci.envimage import pyenv
from acx_oci.errors import AcxError, EnvironmentRefused
from acx_oci.oci.store import StoreOptions
from acx_oci.services.exams.source import ExamSource


def default_store() -> str:
    """Where environment images are kept when no ``--env-store`` is given: an OCI layout beside the image cache."""
    return f"oci:{envcache.default_cache_dir().parent / 'env-layout'}"


class EnvImages:
    """``(unpacked root, image digest)`` per exam with a spec (None without one); one build per spec digest."""

    def __init__(self, store: str | None = None, *, build: bool = True, store_options: StoreOptions | None = None,
                 find_links: Sequence[Path] = (), index_url: str | None = None, allow_build: bool = False) -> None:
        self.store = store or default_store()
        self.build, self.store_options = build, store_options
        self.build_args: dict[str, Any] = {"find_links": tuple(find_links), "index_url": index_url,
                                           "allow_build": allow_build}
        self.lock = threading.Lock()
        self.memo: dict[str, tuple[Path, str]] = {}
        self.failed: dict[str, str] = {}  # spec digest -> why its image could not be had (not tried twice)

    def __call__(self, src: ExamSource) -> tuple[Path, str] | None:
        spec = src.environment
        if spec is None:
            return None
        with self.lock:  # one build per spec at a time: the machine's cores are the builds' anyway
            try:
                digest = pyenv.spec_digest(spec)
            except AcxError as exc:
                raise EnvironmentRefused(str(exc)) from None
            if digest in self.failed:
                raise EnvironmentRefused(self.failed[digest])
            if digest not in self.memo:
                try:
                    ref = pyenv.ensure_image(spec, self.store, build=self.build, store_options=self.store_options,
                                             **self.build_args)
                    p = envcache.prepare(ref, self.store_options)
                except AcxError as exc:
                    self.failed[digest] = str(exc)
                    raise EnvironmentRefused(str(exc)) from None
                self.memo[digest] = (p.root, p.image_digest)
            return self.memo[digest]


def environment_facts(root: Path | None) -> dict[str, Any] | None:
    """What the certification record says of the environment: Python, packages, spec digest (None: no venv)."""
    if root is None:
        return None
    doc = pyenv.read_report(root)
    if doc is None:
        return None
    facts = {"python": doc.get("python"), "packages": doc.get("packages"), "specDigest": doc.get("specDigest")}
    if doc.get("builtFromSource"):
        facts["builtFromSource"] = [b.get("sdist") for b in doc["builtFromSource"] if isinstance(b, dict)]
    return facts
