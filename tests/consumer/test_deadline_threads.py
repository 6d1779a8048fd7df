"""The command's ``--deadline`` reaches the fetches that fan out to thread pools.

The deadline is a ContextVar and pool threads start with an empty context: a fetch submitted bare
ran under ``--timeout`` alone, so 64 referrers to classify (8 threads) against a registry trickling
each answer held ``discover``/``resolve`` for 8 × ``--timeout`` past a 20 s deadline. Each source here
records the deadline its fetches ran under (a protocol object, not a registry stand-in: what is under
test is which deadline the thread sees).
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from acx_oci.errors import NotFoundError
from acx_oci.oci import MEDIA_MANIFEST, CopyPlan, Descriptor, classify_referrers, copy_blobs, parse_reference
from acx_oci.oci.layout import LayoutStore
from acx_oci.oci.referrers import scan_own_tags
from acx_oci.timeutil import Deadline, carry_deadline, current_deadline, deadline_scope


def _digest(i: int, salt: str) -> str:
    return "sha256:" + hashlib.sha256(f"{salt}-{i}".encode()).hexdigest()


class Recording:
    """Answers every manifest with 404 and remembers the deadline each fetch ran under."""

    def __init__(self) -> None:
        self.seen: list[Deadline | None] = []
        self.lock = threading.Lock()
        self.max_tags_scanned = 100
        self.host, self.repository = "rec.example", "rec"

    def fetch_manifest_raw(self, target: str) -> tuple[bytes, str, str]:
        with self.lock:
            self.seen.append(current_deadline())
        raise NotFoundError(f"{target}: not here")

    def list_tags_bounded(self, limit: int) -> tuple[list[str], bool]:
        return [f"acx-att-{_digest(i, 'tag')[7:23]}" for i in range(20)], False


def test_classification_fetches_run_under_the_callers_deadline() -> None:
    src = Recording()
    descs = [Descriptor(MEDIA_MANIFEST, _digest(i, "classify"), 100) for i in range(20)]
    deadline = Deadline.after(30)
    with deadline_scope(deadline):
        classify_referrers(src, _digest(0, "subject"), descs)
    assert len(src.seen) == 20
    assert all(d is deadline for d in src.seen), src.seen


def test_own_tag_scan_fetches_run_under_the_callers_deadline() -> None:
    src = Recording()
    deadline = Deadline.after(30)
    with deadline_scope(deadline):
        scan_own_tags(src, _digest(0, "subject"), set())
    assert len(src.seen) == 20
    assert all(d is deadline for d in src.seen), src.seen


class RecordingLayout(LayoutStore):
    def __init__(self, root: Path, seen: list[Deadline | None]) -> None:
        super().__init__(parse_reference(f"oci:{root}"))
        self.seen = seen

    def fetch_blob(self, digest: str, max_bytes: int = 1 << 30, size: int | None = None) -> bytes:
        self.seen.append(current_deadline())
        return super().fetch_blob(digest, max_bytes, size)


def test_copy_blob_workers_run_under_the_callers_deadline(tmp_path: Path) -> None:
    seen: list[Deadline | None] = []
    src = RecordingLayout(tmp_path / "src", seen)
    dst = LayoutStore(parse_reference(f"oci:{tmp_path / 'dst'}"))
    plan = CopyPlan()
    for i in range(6):
        desc = src.push_blob(f"blob {i}".encode(), "application/octet-stream")
        plan.blobs[desc.digest] = desc
    deadline = Deadline.after(30)
    with deadline_scope(deadline):
        counts = copy_blobs(src, dst, plan, workers=3)
    assert counts.blobs_copied == 6
    assert len(seen) == 6 and all(d is deadline for d in seen), seen


def test_carry_deadline_keeps_the_earlier_one_and_none() -> None:
    outer = Deadline.after(5)
    with deadline_scope(outer):
        run = carry_deadline(current_deadline)
    assert current_deadline() is None
    assert run() is outer
    assert carry_deadline(current_deadline)() is None
