"""``exam certify --executor dask://HOST:PORT``: each exam certified on a Dask worker, the verdicts kept here.

A worker gets the exam's files (its directory, the suite's families file and common grader files), rebuilds
the exam in a temporary suite and runs the stages with the same code as a local run; the record comes back
as plain data (the client unpickles nothing a worker sends, see :mod:`..verifier.executors.wire`). Here the
record is checked (shape, digest, exam id, and the freeze hash this host computes from its own copy: a
worker that graded other files is refused), then the canary stage is redone against the host-only
registry, which never leaves this machine. A lost worker or a refused answer is a harness lane error,
never cached. ``--promote``/``--image`` (one image unpacked here) is local only; an exam's own environment
image (``env.json``) is built or found here and pinned by digest, the worker pulls it from the store itself
(``oci:DIR`` only where the workers see that path; a registry otherwise) and checks the digest, and the record
that comes back must name it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from acx_oci.crypto import canonical
from acx_oci.errors import AcxError, UsageError
from acx_oci.model import CertificationRecord, check_record
from acx_oci.model import exam as mx
from acx_oci.oci import StoreOptions
from acx_oci.services.exams.source import ExamSource, find_suite_root, load_exam
from acx_oci.services.exams.stages import Register, certify_exam, harness_record, with_host_canary

#: One exam's files sent to a worker, at most (a repository the size of sympy fits).
MAX_PAYLOAD_BYTES = 256 * 1024 * 1024
Patterns = tuple[tuple[str, str, str], ...]


class Cluster(Protocol):
    """What certification needs of ``attest``'s Dask executor (:class:`..verifier.executors.dask_cluster.
    DaskExecutor`), named here so the exams package does not import the verifier's."""

    client: Any
    confined: bool

    def workers(self) -> list[str]:
        """The scheduler's worker addresses now."""

    def eligible(self, address: str) -> bool:
        """Whether exams may be placed on this worker (plain TCP: loopback ones only)."""


def pack_exam(src: ExamSource, patterns: Patterns, gold_runs: int) -> dict[str, Any]:
    """What a worker needs to certify ``src``: every directory and regular file of its directory (with the
    exec bit: the workspace's tree hash covers it), the suite's families file and common grader files, the
    patterns and the gold runs. (``load_exam`` has refused links already.)"""
    files: dict[str, list[Any]] = {}
    dirs: list[str] = []
    size = 0
    for dirpath, dirnames, filenames in os.walk(src.dir, followlinks=False):
        dirnames.sort()
        dirs += [(Path(dirpath) / d).relative_to(src.dir).as_posix() for d in dirnames]
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if not p.is_file() or p.is_symlink():
                continue
            data = p.read_bytes()
            size += len(data)
            if size > MAX_PAYLOAD_BYTES:
                raise UsageError(f"exam certify --executor: {src.dir} holds more than {MAX_PAYLOAD_BYTES >> 20} MiB")
            files[p.relative_to(src.dir).as_posix()] = [data, bool(p.stat().st_mode & 0o111)]
    root = find_suite_root(src.dir)
    fam = root / mx.FAMILIES_FILE if root is not None else None
    return {"exam": src.exam_id, "dir": src.dir.name, "files": files, "dirs": dirs, "suite": root is not None,
            "families": fam.read_bytes() if fam is not None and fam.is_file() else None,
            "common": dict(src.common), "patterns": [list(p) for p in patterns], "goldRuns": gold_runs}


def _inside(base: Path, rel: str) -> Path:
    if not rel or ".." in rel.split("/") or rel.startswith("/"):
        raise UsageError(f"exam certify: packed path {rel!r} leaves the exam")
    return base.joinpath(*rel.split("/"))


def _write(base: Path, rel: str, data: bytes, executable: bool = False) -> None:
    path = _inside(base, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(0o755 if executable else 0o644)


def _worker_image(payload: dict[str, Any]) -> tuple[Path, str] | None:
    """The exam's image on the worker: pulled by the pinned reference, unpacked, its digest checked."""
    image = payload.get("image")
    if not isinstance(image, dict):
        return None
    from acx_oci.envimage import prepare_image
    from acx_oci.oci import StoreOptions

    ref = str(image["ref"])
    opts = StoreOptions(plain_http=bool(image.get("plainHttp")), insecure=bool(image.get("insecure")),
                        timeout=float(image.get("timeout") or 30.0))
    root, digest = prepare_image(ref, opts)
    if digest != ref.rsplit("@", 1)[-1]:
        raise UsageError(f"environment image {ref}: the store gave {digest}")
    return root, digest


def certify_packed(payload: dict[str, Any]) -> dict[str, Any]:
    """Run on a worker: rebuild the exam in a temporary suite and certify it (in its environment image when the
    payload pins one); ``{record}`` or ``{error}``.

    The canary registry is the host's: here every marker registers (the host redoes the stage)."""
    tmp = Path(tempfile.mkdtemp(prefix="acx-certify-"))
    try:
        root = tmp / "suite"
        root.mkdir()
        if payload["suite"]:
            if payload["families"] is not None:
                (root / mx.FAMILIES_FILE).write_bytes(payload["families"])
            common = {"graderCommon": "grader-common"} if payload["common"] else {}
            (root / "benchmark.json").write_bytes(canonical(common))
            for rel, text in payload["common"].items():
                _write(root / "grader-common", rel, text.encode("utf-8"))
        exam_dir = root / "tasks" / str(payload["dir"])
        exam_dir.mkdir(parents=True)
        for rel in payload["dirs"]:
            _inside(exam_dir, rel).mkdir(parents=True, exist_ok=True)
        for rel, (data, executable) in payload["files"].items():
            _write(exam_dir, rel, data, bool(executable))
        src = load_exam(exam_dir)
        pats: Patterns = tuple((str(a), str(b), str(c)) for a, b, c in payload["patterns"])
        rec = certify_exam(src, pats, lambda _exam, _markers: [], _worker_image(payload), (),
                           int(payload["goldRuns"]))
        return {"record": rec.to_json()}  # serialised once, for the wire
    except AcxError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:500]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def accept(src: ExamSource, fh: str, answer: Any, register: Register, image_digest: str | None = None
           ) -> CertificationRecord:
    """A worker's answer as this host's record: checked, the canary stage redone here; else a lane error."""
    if not isinstance(answer, dict):
        return harness_record(src, "Dask worker answer refused: not an object")
    if "error" in answer:
        return harness_record(src, f"Dask worker could not certify: {str(answer['error'])[:300]}")
    doc = answer.get("record")
    problems = check_record(doc) if isinstance(doc, dict) else ["not an object"]
    if problems:
        return harness_record(src, f"Dask worker answer refused: {problems[0][:200]}")
    rec = CertificationRecord.load(doc, "Dask worker's record")
    if rec.exam != src.exam_id:
        return harness_record(src, f"Dask worker answer refused: record names exam {rec.exam[:80]!r}")
    got = rec.freeze_hash
    if got is not None and got != fh:
        return harness_record(src, f"Dask worker graded other files: freeze hash {str(got)[:80]}, here {fh}")
    graded_in = rec.image_digest
    if image_digest is not None and graded_in != image_digest:
        return harness_record(src, f"Dask worker graded in another image: {str(graded_in)[:80]}, pinned "
                                   f"{image_digest}")
    return with_host_canary(src, rec, register)


def certify_on_cluster(executor: Cluster, todo: list[tuple[ExamSource, str]], patterns: Patterns,
                       gold_runs: int, jobs: int, register: Register, pinned: dict[str, str] | None = None,
                       store_options: StoreOptions | None = None
                       ) -> Iterator[tuple[ExamSource, str, CertificationRecord, float]]:
    """Certify ``todo`` ((exam, freeze hash) pairs) on the cluster, at most ``jobs`` exams placed at once;
    yields (exam, freeze hash, record, start time) as each finishes. ``pinned``: exam id -> its environment
    image by digest (``store_options`` reach its store)."""
    pinned = pinned or {}
    opts = store_options or StoreOptions()
    if not todo:
        return
    from distributed import as_completed

    client = executor.client
    restrict: dict[str, Any] = {}
    if executor.confined:  # dask:// without --allow-plaintext-executor: loopback workers only
        hosts = sorted({str(urlsplit(a).hostname) for a in executor.workers() if executor.eligible(a)})
        restrict = {"workers": hosts, "allow_other_workers": False}
    run = uuid.uuid4().hex[:16]
    queue = list(enumerate(todo))
    queue.reverse()
    placed: dict[Any, tuple[ExamSource, str, float]] = {}
    with client.as_current():  # as_completed finds the default client; ours is not the default
        waiting = as_completed()  # type: ignore[no-untyped-call]

    def place() -> None:
        n, (src, fh) = queue.pop()
        payload = pack_exam(src, patterns, gold_runs)
        if src.exam_id in pinned:
            payload["image"] = {"ref": pinned[src.exam_id], "plainHttp": opts.plain_http,
                                "insecure": opts.insecure, "timeout": opts.timeout}
        fut = client.submit(certify_packed, payload, key=f"acx-certify-{run}-{n}", pure=False, **restrict)
        placed[fut] = (src, fh, time.monotonic())
        waiting.add(fut)  # type: ignore[no-untyped-call]

    for _ in range(min(max(1, jobs), len(queue))):
        place()
    for fut in waiting:
        src, fh, t0 = placed.pop(fut)
        if fut.status == "finished":
            ref = pinned.get(src.exam_id)
            rec = accept(src, fh, fut.result(), register, ref.rsplit("@", 1)[1] if ref else None)
        else:
            exc = fut.exception() if fut.status == "error" else None
            rec = harness_record(src, f"Dask worker lost the exam ({type(exc).__name__ if exc else fut.status})")
        fut.release()
        if queue:
            place()
        yield src, fh, rec, t0
