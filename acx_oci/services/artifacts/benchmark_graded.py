"""What each exam of a pushed benchmark grades: the tests its certification derived, not every hidden test.

An imported exam that names no test ids is certified on the ids its gold stage derives (``FAIL_TO_PASS`` and
``PASS_TO_PASS``, SWE-bench's validation); the exam on disk still names none. Graded on every hidden test, a
game would fail a correct answer on the tests upstream's own fix fails too, so the pushed task's grader names
the derived ids, and the benchmark digest (and the sealed slice) commit to them.
"""

from __future__ import annotations

from collections.abc import Mapping

from acx_oci.model import Benchmark, CertificationRecord, from_document, grader_digest
from acx_oci.services.exams import derived_ids, explicit_ids, with_ids


def with_graded_tests(bench: Benchmark, records: Mapping[str, CertificationRecord]) -> Benchmark:
    """The suite with each certified exam's grader naming the ids its certification graded (explicit ids,
    ``--tests`` or a SWE-bench instance's lists, are kept as they are)."""
    tasks, changed = [], False
    for t in bench.tasks:
        grader = t.get("grader") or {}
        files = grader.get("files") if isinstance(grader, dict) else None
        ids = derived_ids(records.get(str(t["id"])))
        if ids is None or not isinstance(files, dict) or explicit_ids(files) is not None:
            tasks.append(t)
            continue
        graded = with_ids(files, ids)
        tasks.append({**t, "grader": {**grader, "files": graded, "digest": grader_digest(graded)}})
        changed = True
    return from_document({**bench.meta, "tasks": tasks}, "benchmark with derived tests") if changed else bench
