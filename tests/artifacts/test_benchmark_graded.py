"""benchmark push grades what certification derived (issue 45): the pushed task's grader names the ids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acx_oci.model import benchmark as bmodel
from acx_oci.services.artifacts import benchmark as bm
from acx_oci.services.artifacts import with_graded_tests
from acx_oci.services.exams import derived_ids

ROOT = Path(__file__).resolve().parent.parent.parent
CONF = "acx-grader.json"


def _bench_with_configs(configs: dict[str, dict[str, Any]]) -> bmodel.Benchmark:
    """bench-py with an imported exam's grader config (no ids, or explicit ids) on the named tasks."""
    bench, _ = bm.load_suite_dir(ROOT / "testdata" / "bench-py")
    tasks = []
    for t in bench.tasks:
        if t["id"] in configs:
            files = {**t["grader"]["files"], CONF: json.dumps(configs[t["id"]]) + "\n"}
            t = {**t, "grader": {**t["grader"], "files": files, "digest": bmodel.grader_digest(files)}}
        tasks.append(t)
    return bmodel.from_document({**bench.meta, "tasks": tasks})


def _record(f2p: list[str], p2p: list[str]) -> dict[str, Any]:
    return {"stages": {"gold": {"tests": {"derived": True, "failToPass": f2p, "passToPass": p2p}}}}


def test_a_certified_exams_derived_ids_are_what_the_pushed_task_grades() -> None:
    """On 8c6af49 (and until this change) the derived ids lived only in the certification record: the pushed
    task graded every hidden test, so an attest game failed a correct answer on tests upstream's fix fails."""
    bench = _bench_with_configs({"py-0001": {"packages": ["calc"]},
                                 "py-0002": {"packages": ["calc"], "tests": ["a::x"]}})
    ids = {t["id"]: t for t in bench.tasks}
    records = {"py-0001": _record(["test_hidden.py::test_new"], ["test_hidden.py::test_old"]),
               "py-0002": _record(["test_hidden.py::test_other"], [])}
    out = {t["id"]: t for t in with_graded_tests(bench, records).tasks}
    conf = json.loads(out["py-0001"]["grader"]["files"][CONF])
    assert conf["tests"] == ["test_hidden.py::test_new", "test_hidden.py::test_old"]
    assert conf["packages"] == ["calc"]
    assert out["py-0001"]["grader"]["digest"] == bmodel.grader_digest(out["py-0001"]["grader"]["files"])
    assert out["py-0002"] == ids["py-0002"]  # explicit ids (--tests, SWE-bench lists) win
    assert with_graded_tests(bench, records).digest != bench.digest  # the benchmark commits to them


def test_no_derived_ids_leave_the_suite_as_it_is() -> None:
    bench = _bench_with_configs({"py-0001": {"packages": ["calc"]}})
    assert with_graded_tests(bench, {}) is bench
    assert with_graded_tests(bench, {"py-0001": {"stages": {"gold": {"tests": {"derived": True,
                                                                           "failToPass": []}}}}}) is bench
    assert derived_ids({"stages": {"gold": {"tests": ["not", "derived"]}}}) is None
    assert derived_ids(None) is None
