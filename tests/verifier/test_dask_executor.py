"""Scale-out acceptance: a real ``dask scheduler`` and ``dask worker`` processes on loopback play the games.

The same ROM is attested locally (``--executor local --jobs 1``) and on the cluster: μ, σ, the level and every
record predicate minus the per-run fields (``containment``, ``executor``, ``transcriptDigest``) must be equal.
A worker killed mid-game has that game replayed elsewhere (the record names the lost worker), and a worker
without bubblewrap plays nothing. The agent sleeps 1 s per task so a kill lands mid-game.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acx_oci.model.gamerecords import PER_RUN_FIELDS
from acx_oci.trust import load_identity

from ..support.cli import cli, ok
from ..support.dask_cluster import Cluster, start_cluster, tls_files
from ..support.env import ROOT

AGENTS = ROOT / "testdata" / "agents"
CAP = "implement-feature[python+pytest]@software-engineering"
GAMES = "6"
SLOW_AGENT = """import runpy, time
time.sleep(1.0)
runpy.run_path("/rom/skills/simple_agent.py", run_name="__main__")
"""

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("bwrap") is None,
                                                   reason="bubblewrap (Debian 'bubblewrap') not installed")]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("dask")
    ok(cli("keygen", tmp / "publisher"))
    ok(cli("keygen", tmp / "verifier"))
    layout = f"oci:{tmp / 'layout'}"
    d = tmp / "agent"
    ok(cli("cartridge", "init", d, "--id", "io.example/slow-agent", "--version", "1.0.0", "--capability", CAP,
           "--runtime", "python3 /rom/skills/agent.py"))
    (d / "skills" / "agent.py").write_text(SLOW_AGENT)
    shutil.copy(AGENTS / "simple_agent.py", d / "skills" / "simple_agent.py")
    ok(cli("cartridge", "push", d, f"{layout}:agent", "--key", tmp / "publisher.key"))
    ok(cli("benchmark", "push", ROOT / "testdata" / "bench-py", f"{layout}:bench", "--seal-to",
           tmp / "verifier.did.json", "--allow-uncertified"))
    return {"tmp": tmp, "layout": layout, "did": load_identity(tmp / "verifier.key").did}


def attest_args(world: dict[str, Any], out: str, *extra: str) -> list[str]:
    tmp = world["tmp"]
    return ["attest", f"{world['layout']}:agent", "--benchmark", f"{world['layout']}:bench", "--key",
            str(tmp / "verifier.key"), "--issuer", world["did"], "--state", str(tmp / f"state-{out}"), "-o",
            str(tmp / "runs" / out), "--games", GAMES, "--json", *extra]


def records(world: dict[str, Any], out: str) -> list[dict[str, Any]]:
    preds = []
    for p in sorted((world["tmp"] / "runs" / out / "games").glob("*.dsse.json")):
        env = json.loads(p.read_bytes())
        preds.append(json.loads(base64.b64decode(env["payload"]))["predicate"])
    return preds


def stable(preds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in p.items() if k not in PER_RUN_FIELDS} for p in preds]


def same_answer(a: dict[str, Any], b: dict[str, Any]) -> None:
    for key in ("mu", "sigma", "acxLevel", "passRate", "games", "R"):
        assert a[key] == b[key], key


@pytest.fixture(scope="module")
def local(world: dict[str, Any]) -> dict[str, Any]:
    """The reference answer: the same ROM played here, one game at a time."""
    summary = ok(cli(*attest_args(world, "local", "--executor", "local", "--jobs", "1")), 1)
    assert any("minGames" in r for r in summary["reasons"])  # 6 games: played and rated, below the gate
    return {"summary": summary, "records": records(world, "local")}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = start_cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.add_worker("w1")
        c.add_worker("w2")
        yield c
    finally:
        c.stop()


def test_two_dask_workers_give_the_local_answer(world: dict[str, Any], local: dict[str, Any],
                                                cluster: Cluster) -> None:
    res = cli(*attest_args(world, "dask", "--executor", cluster.url, "--json-events"))
    assert res.exit_code == 1, res.output
    summary = json.loads(res.stdout)
    same_answer(summary, local["summary"])
    preds = records(world, "dask")
    assert stable(preds) == stable(local["records"])
    assert {p["executor"]["worker"] for p in preds} == {"w1", "w2"}
    for p in preds:
        assert p["executor"]["name"] == "dask" and p["executor"]["attempts"] == 1
        assert p["containment"]["proven"] is True and p["containment"]["sandbox"] == "bubblewrap"
    events = [json.loads(line) for line in res.stderr.splitlines() if line.startswith("{")]
    assert events and events[-1]["done"] == int(GAMES) and events[-1]["queued"] == 0
    assert set(events[-1]["workers"]) == {"w1", "w2"}
    assert sum(w["done"] for w in events[-1]["workers"].values()) == int(GAMES)
    assert any(e["running"] >= 1 and e["queued"] >= 1 for e in events)


def no_bwrap_env(tmp: Path) -> dict[str, str]:
    """A PATH where ``bwrap`` is not found: that worker's sandbox cannot start, so its probes fail."""
    empty = tmp / "empty-bin"
    empty.mkdir(exist_ok=True)
    return {"PATH": str(empty)}


def test_a_worker_without_bubblewrap_plays_nothing(world: dict[str, Any], local: dict[str, Any],
                                                  cluster: Cluster) -> None:
    cluster.add_worker("nobwrap", env=no_bwrap_env(world["tmp"]))
    try:
        res = cli(*attest_args(world, "mixed", "--executor", cluster.url, "--jobs", "3", "--json-events"))
    finally:
        cluster.kill_worker("nobwrap")
    assert res.exit_code == 1, res.output
    same_answer(json.loads(res.stdout), local["summary"])
    preds = records(world, "mixed")
    assert stable(preds) == stable(local["records"])
    assert all(p["executor"]["worker"] in ("w1", "w2") and p["containment"]["proven"] for p in preds)
    # It was asked (three slots, three idle workers) and refused to play: its games went elsewhere.
    refused = [p for p in preds if p["executor"].get("unprovenOn")]
    assert refused and all(p["executor"]["unprovenOn"] == ["nobwrap"] for p in refused)
    events = [json.loads(line) for line in res.stderr.splitlines() if line.startswith("{")]
    assert events[-1]["workers"]["nobwrap"] == {"done": 0, "running": 0, "healthy": False}


def test_no_worker_at_all_is_lane_error_and_only_unhealthy_ones_containment_unproven(
        world: dict[str, Any], tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    from acx_oci.services.verifier.executors import dask_cluster

    monkeypatch.setattr(dask_cluster, "PLACEMENT_TIMEOUT", 1.0)
    c = start_cluster(tmp_path_factory.mktemp("bad-cluster"))
    try:
        empty = ok(cli(*attest_args(world, "noworker", "--executor", c.url)), 1)
        # A worker where acx-oci cannot be imported (support.dask_cluster.NO_ACX_WORKER): refused before any attempt.
        c.add_worker("noacx", without_acx_oci=True)
        noacx = cli(*attest_args(world, "noacx", "--executor", c.url))
        c.kill_worker("noacx")
        c.add_worker("nobwrap", env=no_bwrap_env(world["tmp"]))
        summary = ok(cli(*attest_args(world, "unproven", "--executor", c.url)), 1)
    finally:
        c.stop()
    assert noacx.exit_code == 2 and "install acx-oci[dask] on every worker" in noacx.output, noacx.output
    assert "No module named 'acx_oci'" in noacx.output, noacx.output  # the worker's own import failure
    assert not (world["tmp"] / "state-noacx").exists() and not (world["tmp"] / "runs" / "noacx").exists()
    # Nobody to play: every game lane-error (a harness fault, never the model's), the examiner is unreliable.
    assert empty["games"] == 0 and empty["reasons"][0].startswith("examiner_unreliable")
    assert {p["outcome"] for p in records(world, "noworker")} == {"lane-error"}
    assert all("could not be placed" in g["detail"] for g in
               json.loads((world["tmp"] / "runs" / "noworker" / "result.json").read_text())["gameRecords"])
    assert summary["issued"] is False and summary["reasons"][0].startswith("containment_unproven")
    assert summary["games"] == 0 and not (world["tmp"] / "runs" / "unproven" / "credential.json").exists()
    preds = records(world, "unproven")
    assert len(preds) == int(GAMES)
    for p in preds:
        assert p["outcome"] == "withheld" and p["containment"]["proven"] is False
        assert p["executor"]["unprovenOn"] and set(p["executor"]["unprovenOn"]) == {"nobwrap"}
        assert p["executor"]["worker"] is None  # nobody played it


def test_a_worker_killed_mid_game_has_its_game_replayed(world: dict[str, Any], local: dict[str, Any],
                                                         cluster: Cluster) -> None:
    cluster.add_worker("doomed")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "acx_oci",
                             *attest_args(world, "killed", "--executor", cluster.url, "--json-events")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed_at = None
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if not line.startswith("{"):
                continue
            ev = json.loads(line)
            if ev["workers"].get("doomed", {}).get("running"):  # announced just before the agent's 1 s sleep
                cluster.kill_worker("doomed")
                killed_at = ev
                break
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if "doomed" in cluster.workers:
            cluster.kill_worker("doomed")
    assert killed_at is not None, err
    assert proc.returncode == 1, err
    same_answer(json.loads(out), local["summary"])
    preds = records(world, "killed")
    assert stable(preds) == stable(local["records"])
    replayed = [p for p in preds if p["executor"].get("retriedFrom")]
    assert replayed, [p["executor"] for p in preds]
    for p in replayed:
        assert p["executor"]["retriedFrom"] == ["doomed"] and p["executor"]["attempts"] == 2
        assert p["executor"]["worker"] in ("w1", "w2") and p["containment"]["proven"] is True
    assert all(p["executor"]["worker"] != "doomed" or not p.get("retriedFrom") for p in preds)


def test_tls_with_the_verifiers_certificate(world: dict[str, Any], local: dict[str, Any],
                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    d = tmp_path_factory.mktemp("tls-cluster")
    tls = tls_files(d / "pki")
    c = start_cluster(d, tls=tls)
    try:
        assert c.address.startswith("tls://127.0.0.1:")
        c.add_worker("t1")
        summary = ok(cli(*attest_args(world, "tls", "--executor", c.url, "--executor-ca", str(tls["ca"]),
                                      "--executor-cert", str(tls["cert"]), "--executor-key", str(tls["key"]))), 1)
        # Without the verifier's certificate there is no TLS client: a usage error, nothing attempted.
        bare = cli(*attest_args(world, "tls-nocert", "--executor", c.url, "--timeout", "3"))
        # A certificate from another CA: the scheduler does not accept it (exit 3), nothing attempted.
        other = tls_files(d / "other-pki")
        stranger = cli(*attest_args(world, "tls-other", "--executor", c.url, "--timeout", "3", "--executor-ca",
                                    str(other["ca"]), "--executor-cert", str(other["cert"]), "--executor-key",
                                    str(other["key"])))
    finally:
        c.stop()
    same_answer(summary, local["summary"])
    preds = records(world, "tls")
    assert stable(preds) == stable(local["records"]) and {p["executor"]["worker"] for p in preds} == {"t1"}
    assert bare.exit_code == 2 and "--executor-cert" in bare.output, bare.output
    assert stranger.exit_code == 3 and "no Dask scheduler answers" in stranger.output, stranger.output
    assert not (world["tmp"] / "state-tls-nocert").exists() and not (world["tmp"] / "state-tls-other").exists()
