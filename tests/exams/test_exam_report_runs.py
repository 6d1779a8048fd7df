"""``exam report --runs``: rollout cells from real attest runs' game records (a real registry, real crypto).

Three attest runs (two cartridges, one attested twice) -> cells per (task commitment, agent) with raw counts,
no rate and no ranking below ten counted rollouts; a record edited after the run is refused; the held-out task
ids never appear in the report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acx_oci.model import benchmark as bmodel
from acx_oci.model import exam as mx

from ..support.cli import cli, cli_expect

CAP = "build-dag[snowflake+airflow+dbt]@data-engineering"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, registry: str) -> Path:
    tmp = tmp_path_factory.mktemp("exam-report-runs")
    cli_expect("keygen", tmp / "pub")
    did = cli_expect("keygen", tmp / "ver", "--did", "did:web:verifier.acx.example").output.strip().splitlines()[-1]
    cli_expect("benchmark", "demo", tmp / "bench")
    bench = f"{registry}/acx/report-bench:2026.07.1"
    cli_expect("benchmark", "push", tmp / "bench", bench, "--seal-to", tmp / "ver.did.json")
    for i, (name, competence, games) in enumerate((("alpha", 33, 90), ("beta", 20, 40), ("alpha", 33, 90))):
        ref = f"{registry}/acx/report-{name}:1.0.0"
        if i < 2:
            cli_expect("cartridge", "init", tmp / name, "--id", f"io.example/{name}", "--version", "1.0.0",
                       "--capability", CAP)
            cli_expect("cartridge", "push", tmp / name, ref, "--key", tmp / "pub.key")
        cli_expect("attest", ref, "--benchmark", bench, "--key", tmp / "ver.key", "--issuer", did,
                   "--competence", competence, "--games", games, "--state", tmp / "state", "--cooldown", "0",
                   "-o", tmp / "runs" / f"run-{i}", *(() if name == "alpha" else ("--no-push",)), ok=(0, 1))
    (tmp / "runs" / "registry").write_text(registry)
    return tmp / "runs"


def test_three_attest_runs_give_raw_count_cells_and_no_ranking(runs: Path) -> None:
    res = cli("exam", "report", "--runs", runs, "--json")
    assert res.exit_code == 0, res.output
    doc: dict[str, Any] = json.loads(res.output)
    cells = doc["cells"]
    assert {c["agent"] for c in cells} == {"io.example/alpha@1.0.0", "io.example/beta@1.0.0"}
    assert sum(c["rollouts"] for c in cells) == 90 + 40 + 90
    assert all("passRate" not in c and c["rates"].startswith("withheld") for c in cells)
    twice = [c for c in cells if c["agent"] == "io.example/alpha@1.0.0"]
    assert twice and all(c["rollouts"] == 2 for c in twice)  # the same ROM draws the same tasks both times
    assert doc["ranking"] is None and doc["rankingWithheld"].startswith("withheld")
    assert len(doc["harnessReview"]) == 3 and doc["summary"] is None
    creds = sorted(runs.glob("*/credential.json"))
    assert creds  # alpha (competence 33) is issued over 90 games
    for cred in creds:  # the issued runs name the review in the credential
        review = json.loads(cred.read_text())["credentialSubject"]["result"][0]["acx:harnessReview"]
        assert "identical-failure-text" in review["rules"] and review["withheld"] == []
    text = cli_expect("exam", "report", "--runs", runs).output
    assert "raw counts only" in text and "ranking withheld" in text and "passRate" not in text
    ids = [str(t["id"]) for t in bmodel.from_document(bmodel.demo_document()).tasks]
    assert not [i for i in ids if i in res.output or i in text]  # exams are named by commitment only


def test_a_registrys_attestations_are_runs_too(runs: Path) -> None:
    ref = f"{(runs / 'registry').read_text()}/acx/report-alpha:1.0.0"
    doc = json.loads(cli_expect("exam", "report", "--attestations", ref, "--json").output)
    assert {c["agent"] for c in doc["cells"]} == {"io.example/alpha@1.0.0"}
    assert sum(c["rollouts"] for c in doc["cells"]) == 2 * 90 and all(c["rollouts"] == 2 for c in doc["cells"])
    assert doc["ranking"] is None and len(doc["harnessReview"]) == 2
    local = json.loads(cli_expect("exam", "report", "--runs", runs, "--json").output)["cells"]
    assert [c for c in local if c["agent"] == "io.example/alpha@1.0.0"] == doc["cells"]  # the same records


def test_a_record_edited_after_the_run_is_refused(runs: Path, tmp_path: Path) -> None:
    import shutil
    one = tmp_path / "run"
    shutil.copytree(runs / "run-0", one)
    rec = one / "games" / "game-0003.dsse.json"
    env = json.loads(rec.read_bytes())
    env["signatures"] = env["signatures"][:1]
    rec.write_text(json.dumps(env, indent=1))
    res = cli("exam", "report", "--runs", one)
    assert res.exit_code == 1 and "result.json names" in res.output
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("exam", "report", "--runs", empty).exit_code == 2
    assert cli("exam", "report").exit_code == 2


def test_ranking_only_when_every_cell_has_ten_counted_rollouts() -> None:
    rolls = [{"exam": "e", "agent": a, "outcome": o} for a, p in (("a", 3), ("b", 7))
             for o in ["certified-pass"] * p + ["model-fail"] * (10 - p)]
    ranked, why = mx.ranking(mx.rollout_cells(rolls))
    assert why is None and ranked is not None and [r["agent"] for r in ranked] == ["b", "a"]
    ranked, why = mx.ranking(mx.rollout_cells([*rolls, {"exam": "f", "agent": "a", "outcome": "model-fail"}]))
    assert ranked is None and why is not None and "1 of 3" in why
