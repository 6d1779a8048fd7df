"""Each exam's environment image for certification: built or pulled from its ``env.json``, cached by spec digest.

An imported exam carries an environment spec (:mod:`acx_oci.services.exams.envspec`). ``exam certify`` (unless
``--no-environments``) runs its chain inside the image made from that spec — the venv's Python and pytest grade,
never the host's — and the record names the image and the Python and package versions in it. Images live in an
image store (``oci:DIR`` or ``registry/repo``) under the tag ``spec-<digest>``
(:func:`acx_oci.envimage.pyenv.ensure_image`), so one spec is resolved and built once and every later run, on any
machine with the store, pulls it by digest.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from acx_oci.envimage import cache as envcache
from acx_oci.envimage import pyenv
from acx_oci.errors import AcxError, EnvironmentRefused, MachineUnfit
from acx_oci.model import ENV_FILE
from acx_oci.oci import StoreOptions
from acx_oci.services.exams.source import ExamSource

T = TypeVar("T")


def default_store() -> str:
    """Where environment images are kept when no ``--env-store`` is given: an OCI layout beside the image cache."""
    return f"oci:{envcache.default_cache_dir().parent / 'env-layout'}"


#: Which stage an exam is in, as it starts: (exam id, stage, step, of). Called from the certifying threads, so
#: it must be cheap and thread-safe; data only (the CLI draws a status line or writes JSON lines from it).
StageReport = Callable[[str, str, int, int], None]
#: The steps of a build (:func:`acx_oci.envimage.pyenv.build_env_image`'s ``on_step`` names start so).
BUILD_STEPS = ("resolve", "Debian root", "install", "image")
NO_ENVIRONMENTS_HINT = "or grade on the host's Python with --no-environments"


class EnvImages:
    """``(unpacked root, image digest)`` per exam with a spec (None without one); one build per spec digest.

    A spec whose image cannot be had is refused once per run (``failed``). A machine that cannot build at all
    (:class:`MachineUnfit`: no mmdebstrap, no route to the index) is remembered for every spec of the run: an
    image already in the store is still pulled, nothing else is tried, and the reason says how to proceed."""

    def __init__(self, store: str | None = None, *, build: bool = True, store_options: StoreOptions | None = None,
                 find_links: Sequence[Path] = (), index_url: str | None = None, allow_build: bool = True,
                 stages: StageReport | None = None) -> None:
        self.store = store or default_store()
        self.build, self.store_options, self.stages = build, store_options, stages
        self.build_args: dict[str, Any] = {"find_links": tuple(find_links), "index_url": index_url,
                                           "allow_build": allow_build}
        self.lock = threading.Lock()
        self.memo: dict[str, tuple[Path, str]] = {}
        self.refs: dict[str, str] = {}  # spec digest -> its image pinned by digest (for a cluster's workers)
        self.failed: dict[str, str] = {}  # spec digest -> why its image could not be had (not tried twice)
        self.machine: MachineUnfit | None = None  # why this machine builds no image (the run's first such)

    def __call__(self, src: ExamSource) -> tuple[Path, str] | None:
        """The exam's image unpacked here: ``(root, image digest)``; None without a spec."""
        return self._once(src, self.memo, self._get)

    def pinned(self, src: ExamSource) -> str | None:
        """The exam's image as a reference pinned by digest, built and pushed when missing, not unpacked here:
        what a cluster's workers pull (``exam certify --executor``); None without a spec."""
        return self._once(src, self.refs, self._ref)

    def _once(self, src: ExamSource, memo: dict[str, T], get: Callable[[str, dict[str, Any]], T]) -> T | None:
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
            if digest not in memo:
                try:
                    memo[digest] = get(src.exam_id, spec)
                except AcxError as exc:
                    self.failed[digest] = self._why(exc)
                    raise EnvironmentRefused(self.failed[digest]) from None
            return memo[digest]

    def _get(self, exam: str, spec: dict[str, Any]) -> tuple[Path, str]:
        ref = self._ref(exam, spec)
        if self.stages is not None:
            self.stages(exam, "environment: unpack", 1, 1)
        p = envcache.prepare(ref, self.store_options)
        return p.root, p.image_digest

    def _ref(self, exam: str, spec: dict[str, Any]) -> str:
        def report(stage: str, n: int = 1, of: int = 1) -> None:
            if self.stages is not None:
                self.stages(exam, stage, n, of)

        def built(name: str) -> None:  # a build's step, numbered by its place in BUILD_STEPS
            n = next((i for i, s in enumerate(BUILD_STEPS, 1) if name.startswith(s)), 1)
            report(f"environment build: {name}", n, len(BUILD_STEPS))

        report("environment: image store")
        if self.machine is not None and self.machine.store:  # the store is down: no other spec looks there
            raise self.machine
        try:
            ref = pyenv.ensure_image(spec, self.store, build=self.build and self.machine is None,
                                     store_options=self.store_options, on_step=built, **self.build_args)
        except AcxError:
            if self.machine is not None:  # not in the store, and this machine cannot build it
                raise self.machine from None
            raise
        return ref

    def _why(self, exc: AcxError) -> str:
        """The refusal's words; a machine's own lack is kept for the run and says the way out."""
        if not isinstance(exc, MachineUnfit):
            return str(exc)
        if self.machine is None:
            self.machine = exc
        return f"{exc}; {NO_ENVIRONMENTS_HINT}" if exc.host_can_grade else str(exc)


def carrying_specs(dirs: Sequence[Path]) -> list[Path]:
    """The exam directories among ``dirs`` that carry an environment spec (``env.json``), nothing read."""
    return [d for d in dirs if (d / ENV_FILE).is_file()]


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
