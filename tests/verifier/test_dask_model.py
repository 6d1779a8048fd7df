"""Model games on a Dask cluster (issue 22, item 9): the proxy runs beside each game on its worker, and the
provider key is read by the worker from its own environment — the verifier never has it, so it never travels.

The cluster tests start a real ``dask scheduler`` and ``dask worker`` on loopback (tests/support/dask_cluster.py);
the worker gets the key in its environment, the verifier's process does not have it at all. The upstream is
tests/support/fakemodel.py's FakeModel (the real openai SDK in bubblewrap talks to it through the worker's
proxy). A worker started without the key proves nothing and plays nothing: its games are withheld, and the
NOT ISSUED reason names the worker and the missing variable. The unit tests check what the verifier accepts
back as a game's ``model`` record field.
"""

from __future__ import annotations

import json
import pickle
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import WorkerAnswerRefused
from acx_oci.model import modelapi as ma
from acx_oci.services.verifier.executors.wire import model_record, result_from_wire
from acx_oci.solvers import RomBundle
from acx_oci.solvers.remote import worker_setup
from acx_oci.trust import load_identity

from ..sandbox import test_model_egress as egress
from ..support.dask_cluster import Cluster, start_cluster
from ..support.fakemodel import FakeModel, solve_from_reference
from ..support.sdk import sdk_python

BENCH_PY, KEY_ENV, MODEL, REAL_KEY = egress.BENCH_PY, egress.KEY_ENV, egress.MODEL, egress.REAL_KEY
AGENTS = Path(__file__).resolve().parent.parent.parent / "testdata" / "agents"
DECLARED = ma.DeclaredModel("openai-chat", MODEL)
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian 'bubblewrap') not installed")


# --- what comes back from a worker: the model record, checked field by field ---------------------------------

def _answer(outcome: str = "model-fail", **record_changes: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    model_part = {"model": DECLARED.to_json(), "replay": False, "exchanges": []}
    transcript = json.dumps({"taskId": "t", "model": model_part}).encode()
    record = {"id": MODEL, "api": "openai-chat", "requests": 1, "refused": 0, "inputTokens": 5,
              "outputTokens": 7, "transcriptDigest": sha256_digest(canonical(model_part)), **record_changes}
    return {"outcome": outcome, "detail": "d", "transcript": transcript,
            "facts": {"conditions": {"containment": True}, "record": {"model": record, "executor": "forged"}}}, record


def test_a_workers_model_record_is_kept_only_when_it_checks_out() -> None:
    answer, record = _answer()
    res = result_from_wire(answer, DECLARED)
    assert res.facts["record"] == {"model": record}  # the worker's other record fields are dropped
    assert result_from_wire(answer).facts.get("record") is None  # an offline ROM: no model field accepted
    for bad in ({"id": "another-model"}, {"requests": -1}, {"inputTokens": True}, {"refused": 10**10},
                {"transcriptDigest": "sha256:" + "0" * 64}, {"extra": 1}):
        with pytest.raises(WorkerAnswerRefused):
            result_from_wire(_answer(**bad)[0], DECLARED)
    with pytest.raises(WorkerAnswerRefused, match="exactly the fields"):
        model_record({k: v for k, v in record.items() if k != "refused"}, DECLARED, answer["transcript"])
    played_without = {**answer, "facts": {"conditions": {"containment": True}}}
    with pytest.raises(WorkerAnswerRefused, match="without its model record"):
        result_from_wire(played_without, DECLARED)
    # A game the harness lost before its proxy started has no model record, and is no rated game either.
    assert result_from_wire({**played_without, "outcome": "lane-error"}, DECLARED).outcome == "lane-error"


def test_the_bundle_names_the_key_and_each_worker_reads_its_own(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    entry = ma.ModelEntry(MODEL, "openai-chat", "http://127.0.0.1:9/v1", api_key_env=KEY_ENV)
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    bundle = RomBundle(b"{}", "sha256:x", {}, model=entry)
    assert REAL_KEY.encode() not in pickle.dumps(bundle)  # what Dask sends to the workers
    setup, why = worker_setup(entry)
    assert setup is not None and setup.key == REAL_KEY and why is None
    monkeypatch.delenv(KEY_ENV)
    setup, why = worker_setup(entry)
    assert setup is None and why is not None and f"apiKeyEnv {KEY_ENV}" in why
    on_file = ma.ModelEntry(MODEL, "openai-chat", "http://127.0.0.1:9/v1", api_key_file=str(tmp_path / "key"))
    assert worker_setup(on_file)[1] is not None and "apiKeyFile" in str(worker_setup(on_file)[1])
    (tmp_path / "key").write_text(REAL_KEY + "\n")
    assert worker_setup(on_file)[0] is not None


# --- a real cluster --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sdk_python()  # skip (or, under CI, fail) without the SDK in the sandbox's interpreter
    from ..support.cli import cli, ok

    tmp = tmp_path_factory.mktemp("dask-model")
    ok(cli("keygen", tmp / "publisher"))
    ok(cli("keygen", tmp / "verifier"))
    layout = f"oci:{tmp / 'layout'}"
    egress.make_cartridge(tmp, "honest", AGENTS / "llm_agent.py", layout)
    ok(cli("benchmark", "push", BENCH_PY, f"{layout}:bench", "--seal-to", tmp / "verifier.did.json",
           "--allow-uncertified"))
    return {"tmp": tmp, "layout": layout, "did": load_identity(tmp / "verifier.key").did}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = start_cluster(tmp_path_factory.mktemp("model-cluster"))
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture()
def verifier_without_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The verifier's own process has no key: whatever a worker uses, it did not come from here."""
    monkeypatch.delenv(KEY_ENV, raising=False)


@pytest.mark.slow
@needs_bwrap
def test_model_games_on_a_worker_that_holds_the_key(world: dict[str, Any], cluster: Cluster,
                                                    verifier_without_key: None) -> None:
    cluster.add_worker("keyed", env={KEY_ENV: REAL_KEY})
    try:
        with FakeModel(solve_from_reference(BENCH_PY), key=REAL_KEY) as fm:
            models = egress.models_file(world["tmp"], fm, "dask")
            res = egress.attest(world, "honest", "dask", "--models", str(models), "--games", "2",
                         "--executor", cluster.url)
    finally:
        cluster.kill_worker("keyed")
    assert res.exit_code == 1, res.output  # two games cannot pass the gate: played and rated, not issued
    summary = json.loads(res.output)
    out = world["tmp"] / "runs" / "dask"
    preds = egress.predicates(out)
    assert len(preds) == 2 and json.loads((out / "result.json").read_text())["run"]["draws"] == 2
    # The draw hangs on the ROM digest (fresh keys each run): an impossible exam (a canary) is played, never rated.
    assert summary["games"] == sum(not p.get("canary") for p in preds), summary
    for p in preds:
        assert p["executor"] == {"name": "dask", "worker": "keyed", "attempts": 1}
        assert p["containment"]["proven"] is True and p["containment"]["modelEgress"]["id"] == MODEL
        assert any("model" in pr["name"] for pr in p["containment"]["probes"])  # the model probes ran there
        m = p["model"]
        assert m["id"] == MODEL and m["requests"] >= 1 and m["refused"] == 0 and m["inputTokens"] > 0
        assert p["solver"]["sandbox"]["network"] == "model"
    # The reference answers pass every possible exam and fail every impossible one (bench-py's canaries).
    assert all(p["outcome"] == ("model-fail" if p.get("canary") else "certified-pass") for p in preds), preds
    # The upstream saw the worker's key (the verifier never had it) and only allowed requests, all counted.
    assert fm.requests and len(fm.requests) == sum(p["model"]["requests"] for p in preds)
    egress.only_allowed(fm)
    seen = egress.transcripts(world, out)
    for p in preds:  # the model transcript came back inside the game transcript, and digests to the record's
        assert any(p["model"]["transcriptDigest"] == sha256_digest(canonical(t["model"])) for t in seen)
    assert all(t["model"]["exchanges"] for t in seen)
    # The key is nowhere in what came back: records, transcripts (sealed and opened), the output, the state.
    assert REAL_KEY not in json.dumps(seen) and REAL_KEY not in res.output
    assert REAL_KEY.encode() not in egress.everything(out, world["tmp"] / "state-dask")


@pytest.mark.slow
@needs_bwrap
def test_a_worker_without_the_key_plays_nothing_and_is_named(world: dict[str, Any], cluster: Cluster,
                                                            verifier_without_key: None) -> None:
    cluster.add_worker("nokey")  # this process's environment: KEY_ENV is not set
    try:
        with FakeModel("x", key=REAL_KEY) as fm:
            models = egress.models_file(world["tmp"], fm, "dask-nokey")
            res = egress.attest(world, "honest", "dask-nokey", "--models", str(models), "--games", "2",
                         "--executor", cluster.url)
    finally:
        cluster.kill_worker("nokey")
    assert res.exit_code == 1, res.output
    summary = json.loads(res.output)
    assert summary["status"] == "not-issued" and summary["games"] == 0
    reason = summary["reasons"][0]
    assert reason.startswith("containment_unproven") and "nokey" in reason and f"apiKeyEnv {KEY_ENV}" in reason
    assert "Traceback" not in res.output
    assert not fm.requests  # nothing reached the provider
    preds = egress.predicates(world["tmp"] / "runs" / "dask-nokey")
    assert len(preds) == 2
    for p in preds:
        assert p["outcome"] == "withheld" and p["containment"]["proven"] is False
        assert p["executor"]["unprovenOn"] == ["nokey"] and p["executor"]["worker"] is None
        assert "model" not in p
