"""Certification a user can run on real suites (issue 37.7): gold stability, per-run process budgets,
results streamed as each exam finishes, and exams certified on a Dask cluster."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acx_oci.model import exam_record as xr
from acx_oci.sandbox import GradeResult, SandboxSpec, give_to_sandbox, own_uid, run, staging_dir
from acx_oci.sandbox.uids import UID_POOL_BASE, UID_POOL_SIZE
from acx_oci.services import exams as ex
from acx_oci.services.exams import certify, stages
from acx_oci.services.exams.source import load_exam

from ..conftest import TESTDATA
from ..support.cli import cli

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="distinct host uids need a root verifier")


def derived_suite(tmp: Path) -> Path:
    """exams-good with fx-0001 turned into an exam with derived controls: its lookalike and incomplete become
    mutants (``controls/mutant-NN``) and no hand-made lookalike is left."""
    suite = tmp / "suite"
    shutil.copytree(TESTDATA / "exams-good", suite)
    ctl = suite / "tasks" / "fx-0001" / "controls"
    shutil.copytree(ctl / "lookalike", ctl / "mutant-01")
    shutil.copytree(ctl / "incomplete", ctl / "mutant-02")
    shutil.rmtree(ctl / "lookalike")
    return suite


def test_gold_runs_are_for_exams_with_derived_controls_only(tmp_path: Path) -> None:
    hand = load_exam(TESTDATA / "exams-good" / "tasks" / "fx-0001")
    derived = load_exam(derived_suite(tmp_path) / "tasks" / "fx-0001")
    impossible = load_exam(TESTDATA / "exams-good" / "tasks" / "fx-0003")
    assert stages.gold_runs_for(hand, 3) == 1  # bench-py's shape: hand-made controls, one gold run
    assert stages.gold_runs_for(derived, 3) == 3 and stages.gold_runs_for(derived, 1) == 1
    assert stages.gold_runs_for(impossible, 3) == 1


@needs_bwrap
def test_a_flaky_reference_is_refused_with_its_count_and_results_stream_as_they_finish(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference passes its first run and fails its second (graded for real: the second grade is of the
    untouched tree, as a flaky test would fail): refused as flaky, the record keeps 1 of 2."""
    real = stages._Grader.gold
    calls = [0]

    def flaky(self: Any) -> GradeResult:
        calls[0] += 1
        return self.overlay({}, "the reference") if calls[0] == 2 else real(self)

    monkeypatch.setattr(stages._Grader, "gold", flaky)
    suite, out, lines = derived_suite(tmp_path), tmp_path / "certs", []
    (rec,) = ex.certify_suite(suite / "tasks" / "fx-0001", jobs=1, out=out, progress=lines.append, gold_runs=2)
    gold = rec["stages"]["gold"]
    assert gold["goldRuns"] == 2 and gold["goldPasses"] == 1 and gold["referenceStable"] is False
    assert gold["reason"] == "flaky: the reference passed 1 of 2 runs" and rec["certified"] is False
    assert ("gold", "referenceStable") in xr.failures(rec)
    (line,) = lines
    assert line.startswith("exam certify [1/1] fx-0001: refused at gold: referenceStable")
    (event,) = [json.loads(x) for x in (out / ex.STREAM_FILE).read_text().splitlines()]
    assert event["exam"] == "fx-0001" and event["certified"] is False and event["cached"] is False
    # the refusal is a verdict (cached), but not for a run that asks for more gold runs than it had
    src = load_exam(suite / "tasks" / "fx-0001")
    key = certify._cache_key(rec["stages"]["freeze"]["freezeHash"], None)
    assert certify._cached(out, src, key, 2) == rec and certify._cached(out, src, key, 3) is None


def _run_owned(spec: SandboxSpec, script: str, seen: dict[str, Any], name: str) -> None:
    """Run ``script`` with a host uid of its own; the sandbox writes /out/f, whose host owner is that uid."""
    with own_uid(spec) as s:
        out = staging_dir("acx-uid-test-")
        try:
            give_to_sandbox(out, s)
            seen[name + "_uid"] = s.host_uid
            seen[name] = run(dataclasses.replace(s, rw_binds=((out, "/out"),)), ["/bin/sh", "-c", "touch /out/f; "
                                                                                 + script])
            seen[name + "_owner"] = (out / "f").stat().st_uid if (out / "f").exists() else None
        finally:
            shutil.rmtree(out, ignore_errors=True)


@needs_bwrap
@as_root
def test_parallel_sandboxes_run_under_distinct_host_uids_with_their_own_process_budget() -> None:
    """A sandbox holding its whole process budget leaves another's intact: each runs under a host uid of its
    own (under one shared uid, ``setpriv`` could not even exec bwrap: EAGAIN)."""
    spec = SandboxSpec(time_seconds=20.0, pids=8)
    seen: dict[str, Any] = {}
    hog = threading.Thread(target=_run_owned, args=(spec, "for i in 1 2 3 4 5 6 7 8 9; do sleep 4 & done; wait",
                                                    seen, "hog"))
    hog.start()
    try:
        while "hog_uid" not in seen and hog.is_alive():
            threading.Event().wait(0.05)
        threading.Event().wait(1.5)  # the hog now holds its budget of processes
        _run_owned(spec, "sleep 0.1 & sleep 0.1 & wait; echo forked", seen, "other")
    finally:
        hog.join()
    other = seen["other"]
    assert other.returncode == 0 and other.stdout == b"forked\n", other.stderr
    assert seen["other_owner"] == seen["other_uid"] and seen["hog_owner"] == seen["hog_uid"] != seen["other_uid"]
    assert all(UID_POOL_BASE <= seen[k] < UID_POOL_BASE + UID_POOL_SIZE for k in ("hog_uid", "other_uid"))
    with own_uid(SandboxSpec(host_uid=12345, host_gid=12345)) as pinned:  # a spec that names its uid keeps it
        assert pinned.host_uid == 12345


def test_import_help_names_test_ids() -> None:
    res = cli("exam", "import", "--classification", "public", "--help")
    assert "PATH::TEST" in res.output and "FAIL_TO_PASS" in res.output


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Any]:
    from ..support.dask_cluster import start_cluster

    c = start_cluster(tmp_path / "cluster")
    try:
        c.add_worker("w1")
        yield c
    finally:
        c.stop()


@pytest.mark.slow
@needs_bwrap
def test_exams_certify_on_a_dask_cluster_with_the_canaries_registered_here(tmp_path: Path, cluster: Any) -> None:
    suite, out = derived_suite(tmp_path), tmp_path / "certs"
    res = cli("exam", "certify", suite / "tasks", "--out", out, "--executor", cluster.url, "--json")
    doc = json.loads(res.stdout)
    assert {"certified", "records"} <= set(doc) and isinstance(doc["records"], list)  # the --json surface
    recs = {r["exam"]: r for r in doc["records"]}
    derived, impossible = recs["fx-0001"], recs["fx-0003"]
    assert derived["certified"] is True, xr.failures(derived)
    assert derived["stages"]["gold"]["goldRuns"] == 3 and derived["stages"]["gold"]["goldPasses"] == 3
    assert derived["stages"]["grader"]["controlsDerived"] is True
    assert impossible["certified"] is True and impossible["stages"]["gold"].get("goldRuns", 1) == 1
    assert not xr.check_record(derived) and derived == ex.load_records(out)["fx-0001"]
    registry = json.loads((out / ex.REGISTRY_FILE).read_text())  # the canary stage ran here, on the host
    assert {v["exam"] for v in registry.values()} >= {"fx-0001", "fx-0003"}
    assert res.exit_code == (0 if doc["certified"] else 1)
    events = [json.loads(x) for x in (out / ex.STREAM_FILE).read_text().splitlines()]
    assert sorted(e["exam"] for e in events) == sorted(recs) and events[-1]["done"] == len(recs)
    assert res.stderr.count("exam certify [") == len(recs)
