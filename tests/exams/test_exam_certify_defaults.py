"""``exam certify`` by default: an imported exam is graded in its own environment (or refused, named, in seconds,
when this machine cannot build it), ``--no-environments`` grades on the host, ``--executor`` asks the scheduler
before any image is built; and each exam's stages are reported as they start (issue 37)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from acx_oci.cli.certify_progress import CertifyProgress, status_text
from acx_oci.envimage import preflight
from acx_oci.errors import MachineUnfit
from acx_oci.services.exams import FINISHED

from ..support.cli import cli
from .test_exam_import import make_repo

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
UNREACHABLE = "http://127.0.0.1:9/simple"  # the discard port: nothing listens, the connect is refused at once


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two imported exams of one fix whose environment specs differ (3.11 derived, 3.13 given)."""
    tmp = tmp_path_factory.mktemp("envdefault")
    shas = make_repo(tmp / "calc")
    for eid, extra in (("calc-311", []), ("calc-313", ["--python", "3.13"])):
        res = cli("exam", "import", "--classification", "public",
                  "--repo", tmp / "calc", "--base", shas["base"], "--fix", shas["fix"], "--id",
                  eid, "-o", tmp / "suite", *extra)
        assert res.exit_code == 0, res.output
    return tmp / "suite"


@needs_bwrap
@pytest.mark.skipif(shutil.which("mmdebstrap") is None, reason="mmdebstrap not installed")
def test_an_imported_exam_tries_its_environment_without_any_flag(suite: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    probes: list[str | None] = []
    real = preflight.probe_index

    def counted(index_url: str | None, timeout: float = preflight.CONNECT_SECONDS) -> None:
        probes.append(index_url)
        real(index_url, timeout)

    monkeypatch.setattr(preflight, "probe_index", counted)
    res = cli("exam", "certify", suite, "--out", tmp_path / "certs", "--env-store", f"oci:{tmp_path / 'store'}",
              "--index-url", UNREACHABLE, "--json", "--json-events")
    assert res.exit_code == 1, res.output
    records = json.loads(res.stdout)["records"]
    assert [r["exam"] for r in records] == ["calc-311", "calc-313"]
    for rec in records:
        gold = rec["stages"]["gold"]
        assert rec["certified"] is False and gold["environmentBuilt"] is False
        assert "the package index http://127.0.0.1:9/simple is unreachable" in gold["reason"]
        assert gold["reason"].endswith("or grade on the host's Python with --no-environments")
    assert probes == [UNREACHABLE]  # the machine's failure is remembered: the second spec tries nothing
    assert not list((tmp_path / "certs").glob("by-freeze/*"))  # never cached: the network may come back
    events = [json.loads(line) for line in res.stderr.splitlines() if line.startswith("{")]
    # each worker has its own exam's image looked for, so the two exams' events may interleave
    assert sorted((e["event"], e.get("exam"), e.get("stage")) for e in events) == [
        ("exam", None, None), ("exam", None, None),
        ("stage", "calc-311", "environment: image store"), ("stage", "calc-313", "environment: image store")]
    lines = sorted(e["line"] for e in events if e["event"] == "exam")
    assert any(" calc-311: refused at gold: environment not built: the package index" in ln for ln in lines), lines


@needs_bwrap
def test_a_machine_without_mmdebstrap_says_how_to_proceed(suite: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"  # a PATH with bubblewrap and no mmdebstrap
    bin_dir.mkdir()
    os.symlink(str(shutil.which("bwrap")), bin_dir / "bwrap")
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(MachineUnfit, match="install Debian 'mmdebstrap'"):
        preflight.check(None)
    res = cli("exam", "certify", suite / "tasks" / "calc-311", "--out", tmp_path / "certs", "--env-store",
              f"oci:{tmp_path / 'store'}", "--json")
    assert res.exit_code == 1, res.output
    (rec,) = json.loads(res.stdout)["records"]
    reason = rec["stages"]["gold"]["reason"]
    assert "mmdebstrap not found" in reason and "--no-environments" in reason, reason


def test_an_unreachable_image_store_is_the_machine_s_and_tried_once(suite: Path, tmp_path: Path) -> None:
    res = cli("exam", "certify", suite, "--out", tmp_path / "certs", "--env-store", "127.0.0.1:9/acx/env",
              "--plain-http", "--timeout", "5", "--json")
    assert res.exit_code == 1, res.output
    reasons = [r["stages"]["gold"]["reason"] for r in json.loads(res.stdout)["records"]]
    assert len(reasons) == 2 and reasons[0] == reasons[1], reasons  # the second spec: the run's remembered refusal
    assert "the environment image store 127.0.0.1:9/acx/env cannot be read" in reasons[0]
    assert reasons[0].endswith("give a reachable --env-store; or grade on the host's Python with --no-environments")


def test_an_executor_is_contacted_before_any_environment_image_is_built(suite: Path, tmp_path: Path) -> None:
    """Exams with env.json certify on a cluster too (each image pinned here, pulled by the worker: issue 43);
    a scheduler that does not answer is named in seconds, before minutes of image builds."""
    res = cli("exam", "certify", suite, "--out", tmp_path / "certs", "--executor", "dask://127.0.0.1:9",
              "--timeout", "1", "--env-store", f"oci:{tmp_path / 'images'}")
    assert res.exit_code == 3, res.output
    assert "no Dask scheduler answers" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "images").exists()  # nothing was built
    other = cli("exam", "certify", suite, "--out", tmp_path / "certs", "--executor", "dask://127.0.0.1:9",
                "--no-environments", "--timeout", "1")
    assert other.exit_code == 3 and "no Dask scheduler answers" in other.output
    assert not (tmp_path / "certs").exists()


def test_an_unreachable_index_is_named_at_once() -> None:
    with pytest.raises(MachineUnfit, match=r"127\.0\.0\.1:9: Connection refused"):
        preflight.probe_index(UNREACHABLE)
    preflight.probe_index("file:///nonexistent/index")  # a local index needs no network


def test_json_events_are_one_line_per_stage_and_plain_stderr_gets_verdicts_only(capsys: Any) -> None:
    events = CertifyProgress(1, json_events=True, tty=True)  # --json-events wins over the terminal
    assert events.stages is not None and events.display is None
    events.stages("fx-0001", "gold", 2, 3)
    events.stages("fx-0001", FINISHED, 1, 1)  # the exam's own line says it finished
    events.line("exam certify [1/1] fx-0001: certified (1.0s)")
    assert [json.loads(x) for x in capsys.readouterr().err.splitlines()] == [
        {"event": "stage", "exam": "fx-0001", "stage": "gold", "step": 2, "of": 3},
        {"event": "exam", "line": "exam certify [1/1] fx-0001: certified (1.0s)"}]
    plain = CertifyProgress(1, json_events=False, tty=False)
    assert plain.stages is None  # no terminal: nothing reports stages, nothing is computed for them
    plain.line("exam certify [1/1] fx-0001: certified (1.0s)")
    assert capsys.readouterr().err == "exam certify [1/1] fx-0001: certified (1.0s)\n"


def test_the_status_line_names_each_running_exam_and_its_stage() -> None:
    shown = CertifyProgress(3, json_events=False, tty=True)
    report = shown.stages
    assert report is not None
    try:
        report("calc-001", "gold", 2, 3)
        report("calc-002", "mutants", 3, 8)
        report("calc-003", "environment build: Debian root bookworm (mmdebstrap)", 2, 4)
        assert status_text(shown.running) == ("running: calc-001 gold 2/3, calc-002 mutants 3/8, calc-003 "
                                              "environment build: Debian root bookworm (mmdebstrap) 2/4")
        report("calc-001", FINISHED, 1, 3)
        assert (shown.done, shown.total) == (1, 3) and "calc-001" not in shown.running
        for n in range(4, 9):
            report(f"calc-00{n}", "contract", 1, 1)
        assert status_text(shown.running).endswith("calc-004 contract (+4 more)")
    finally:
        shown.stop()
