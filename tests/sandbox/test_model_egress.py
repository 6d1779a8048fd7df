"""Agents that call a model (issue 22): the real openai SDK in a real bubblewrap sandbox, through the verifier's
proxy, to a local upstream that speaks the provider's wire format (tests/support/fakemodel.py).

What the upstream saw is the ground truth for "only allowed requests, only the verifier's key"; the kept
workspaces (the solver's staging tree, copied out before it is removed) show what the agent could see.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from acx_oci import reasons
from acx_oci.crypto import unseal
from acx_oci.solvers import rom as rom_solver
from acx_oci.trust import load_identity
from tests.support.cli import cli, ok
from tests.support.fakemodel import FakeModel, ModelRequest, SlowStream, files_answer, solve_from_reference
from tests.support.sdk import sdk_python

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH_PY = ROOT / "testdata" / "bench-py"
AGENTS = ROOT / "testdata" / "agents"
CAP = "implement-feature[python+pytest]@software-engineering"
MODEL = "acme-large-2026-06"
REAL_KEY = "sk-acx-REAL-verifier-key-0b7e1f"
KEY_ENV = "ACX_TEST_MODEL_KEY"

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian 'bubblewrap') not installed")


def make_cartridge(tmp: Path, name: str, agent: Path, layout: str, *, model: str = MODEL,
                   time_seconds: int | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
    d = tmp / name
    ok(cli("cartridge", "init", str(d), "--id", f"io.example/{name}", "--version", "1.0.0", "--capability", CAP,
           "--runtime", "python3 /rom/skills/agent.py", "--model", f"openai-chat:{model}"))
    shutil.copy(agent, d / "skills" / "agent.py")
    if time_seconds or env:
        import yaml

        spec = yaml.safe_load((d / "cartridge.yaml").read_text())
        if time_seconds:
            spec["runtime"]["limits"] = {"timeSeconds": time_seconds}
        if env:
            spec["runtime"]["env"] = env
        (d / "cartridge.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return dict(ok(cli("cartridge", "push", str(d), f"{layout}:{name}", "--key", str(tmp / "publisher.key"),
                       "--json")))


def models_file(tmp: Path, fm: FakeModel, name: str, **extra: Any) -> Path:
    entry = {"id": MODEL, "api": "openai-chat", "baseUrl": fm.base_url, "apiKeyEnv": KEY_ENV,
             "trainingCutoff": "2020-01-01", **extra}
    p = tmp / f"models-{name}.json"
    p.write_text(json.dumps({"models": [entry]}))
    return p


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sdk_python()  # skip (or, under CI, fail) without the SDK in the sandbox's interpreter
    tmp = tmp_path_factory.mktemp("egress")
    ok(cli("keygen", str(tmp / "publisher")))
    ok(cli("keygen", str(tmp / "verifier")))
    layout = f"oci:{tmp / 'layout'}"
    carts = {name: make_cartridge(tmp, name, AGENTS / f"{agent}.py", layout, **kw) for name, agent, kw in (
        ("honest", "llm_agent", {}),
        ("hostile", "llm_hostile_agent", {"time_seconds": 300}),
        ("looping", "llm_looping_agent", {}),
        ("streaming", "llm_streaming_agent", {}),
    )}
    ok(cli("benchmark", "push", str(BENCH_PY), f"{layout}:bench", "--seal-to", str(tmp / "verifier.did.json"),
           "--allow-uncertified"))
    return {"tmp": tmp, "layout": layout, "carts": carts, "did": load_identity(f"{tmp / 'verifier'}.key").did}


@pytest.fixture()
def key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, REAL_KEY)


@pytest.fixture()
def kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Every game's workspace, copied out before the solver removes its staging tree."""
    out = tmp_path / "kept"
    out.mkdir()
    original = rom_solver.remove_tree

    def keep(path: Path) -> None:
        if (path / "workspace").is_dir():
            shutil.copytree(path / "workspace", out / f"{len(list(out.iterdir())):03d}", symlinks=True)
        original(path)

    monkeypatch.setattr(rom_solver, "remove_tree", keep)
    return out


def attest(world: dict[str, Any], name: str, out: str, *extra: str) -> Result:
    tmp = world["tmp"]
    return cli("attest", f"{world['layout']}:{name}", "--benchmark", f"{world['layout']}:bench", "--key",
               f"{tmp / 'verifier'}.key", "--issuer", world["did"], "--state", str(tmp / f"state-{out}"), "-o",
               str(tmp / "runs" / out), "--cooldown", "0", "--json", *extra)


def predicates(out: Path) -> list[dict[str, Any]]:
    preds = []
    for p in sorted((out / "games").glob("*.dsse.json")):
        env = json.loads(p.read_bytes())
        preds.append(json.loads(base64.b64decode(env["payload"]))["predicate"])
    return preds


def transcripts(world: dict[str, Any], out: Path) -> list[dict[str, Any]]:
    ident = load_identity(f"{world['tmp'] / 'verifier'}.key")
    return [json.loads(unseal(json.loads(p.read_bytes()), ident, b"acx-oci/game-transcript/v1"))
            for p in sorted((out / "transcripts").glob("*.sealed.json"))]


def everything(*roots: Path) -> bytes:
    return b"".join(p.read_bytes() for r in roots for p in r.rglob("*") if p.is_file() and not p.is_symlink())


def only_allowed(fm: FakeModel) -> None:
    """The upstream saw nothing but the declared API, the declared model and the verifier's own key."""
    for r in fm.requests:
        assert (r.method, r.path) == ("POST", "/v1/chat/completions"), (r.method, r.path)
        assert r.headers.get("authorization") == f"Bearer {REAL_KEY}"
        assert r.json()["model"] == MODEL


def test_honest_llm_agent_calls_the_model_only_through_the_proxy(world: dict[str, Any], key_env: None) -> None:
    with FakeModel(solve_from_reference(BENCH_PY), key=REAL_KEY) as fm:
        models = models_file(world["tmp"], fm, "honest")
        res = attest(world, "honest", "honest", "--models", str(models), "--games", "4", "--jobs", "2")
        summary = ok(res, 1)  # 4 games cannot pass the gate: NOT ISSUED, but every game was played
    out = world["tmp"] / "runs" / "honest"
    preds = predicates(out)
    assert len(preds) == 4
    for p in preds:
        m = p["model"]
        assert m["id"] == MODEL and m["api"] == "openai-chat" and m["requests"] >= 1 and m["refused"] == 0
        assert m["transcriptDigest"].startswith("sha256:") and m["inputTokens"] > 0 and m["outputTokens"] > 0
        assert p["solver"]["sandbox"]["network"] == "model"
    assert any(p["outcome"] == "certified-pass" for p in preds), summary
    assert len(fm.requests) == sum(p["model"]["requests"] for p in preds)
    only_allowed(fm)
    # The model transcript rides sealed in the game transcript, and its digest is the record's.
    from acx_oci.crypto import canonical, sha256_digest

    for t in transcripts(world, out):
        assert t["model"]["exchanges"] and t["model"]["exchanges"][0]["response"]["status"] == 200
        assert any(p["model"]["transcriptDigest"] == sha256_digest(canonical(t["model"])) for p in preds)
        assert REAL_KEY not in json.dumps(t)  # recorded less the key
    assert REAL_KEY.encode() not in everything(out) + res.output.encode()
    # The verifier's state remembers which held-out tasks went to which provider.
    exposed = ok(cli("benchmark", "exposures", "--state", str(world["tmp"] / "state-honest"), "--json"))
    assert exposed["tasks"] == 4 and exposed["unknownDataUse"] == 4
    assert {e["model"] for e in exposed["exposures"]} == {MODEL}
    assert {e["provider"] for e in exposed["exposures"]} == {f"127.0.0.1:{fm.port}"}
    held_out = {t["id"] for t in json.loads(unseal_slice(world))}
    assert {e["taskId"] for e in exposed["exposures"]} <= held_out
    assert "burned for models trained after" in ok(cli("benchmark", "exposures", "--state",
                                                       str(world["tmp"] / "state-honest")))


def unseal_slice(world: dict[str, Any]) -> str:
    out = world["tmp"] / "held-out.json"
    if not out.exists():
        ok(cli("benchmark", "unseal", f"{world['layout']}:bench", "--key", f"{world['tmp'] / 'verifier'}.key",
               "-o", str(out)))
    doc = json.loads(out.read_text())
    return json.dumps(doc["tasks"] if isinstance(doc, dict) else doc)


def test_hostile_llm_agent_sees_no_key_and_gets_nothing_forbidden_upstream(world: dict[str, Any], key_env: None,
                                                                          kept: Path) -> None:
    with FakeModel("ok", key=REAL_KEY) as fm:
        models = models_file(world["tmp"], fm, "hostile")
        res = attest(world, "hostile", "hostile", "--models", str(models), "--games", "1")
        ok(res, 1)
    out = world["tmp"] / "runs" / "hostile"
    [pred] = predicates(out)
    ws = next(kept.iterdir())
    attempts = json.loads((ws / "attempts.json").read_text())
    names = {a["name"]: a for a in attempts}
    assert (ws / "dump.txt").stat().st_size > 1000  # it did read the environment, files and /proc
    assert REAL_KEY.encode() not in everything(kept, out) + res.output.encode()
    only_allowed(fm)  # CONNECT, /v1/files, another model, an absolute URI, a foreign Host: none reached it
    assert len(fm.requests) == pred["model"]["requests"]
    assert pred["model"]["refused"] >= 5, (pred["model"], attempts)
    [t] = transcripts(world, out)
    refused = {e.get("refused") for e in t["model"]["exchanges"]}
    assert {"path_refused", "model_refused", "connect_refused", "absolute_uri_refused", "host_refused"} <= refused, \
        (refused, names)


def test_looping_agent_stops_at_the_request_and_token_budgets(world: dict[str, Any], key_env: None,
                                                              kept: Path) -> None:
    with FakeModel("one two three four five", key=REAL_KEY) as fm:
        models = models_file(world["tmp"], fm, "loop-req", maxRequestsPerGame=3)
        ok(attest(world, "looping", "loop-req", "--models", str(models), "--games", "1"), 1)
        assert len(fm.requests) == 3
    calls = json.loads((next(kept.iterdir()) / "calls.json").read_text())
    assert calls["ok"] == 3 and calls["stopped"]["status"] == 429, calls
    [pred] = predicates(world["tmp"] / "runs" / "loop-req")
    assert pred["model"]["requests"] == 3 and pred["model"]["refused"] >= 1
    assert pred["outcome"] in ("model-fail", "certified-pass")  # out of budget is the agent's doing, never a lane error
    with FakeModel("one two three four five", key=REAL_KEY) as fm:
        models = models_file(world["tmp"], fm, "loop-tok", maxTokensPerGame=40)
        ok(attest(world, "looping", "loop-tok", "--models", str(models), "--games", "1"), 1)
        seen = len(fm.requests)
    [pred] = predicates(world["tmp"] / "runs" / "loop-tok")
    used = pred["model"]["inputTokens"] + pred["model"]["outputTokens"]
    assert seen == pred["model"]["requests"] and 1 <= seen < 1000 and used >= 40
    [t] = transcripts(world, world["tmp"] / "runs" / "loop-tok")
    forwarded = [e for e in t["model"]["exchanges"] if not e.get("refused")]
    before_last = sum(e["usage"]["input"] + e["usage"]["output"] for e in forwarded[:-1])
    assert len(forwarded) == seen and before_last < 40  # the budget was not yet spent when the last one went
    assert t["model"]["exchanges"][-1].get("refused") == "token_budget"


def test_a_streamed_answer_reaches_the_agent_chunk_by_chunk(world: dict[str, Any], key_env: None,
                                                           kept: Path) -> None:
    with FakeModel("alpha beta gamma delta", key=REAL_KEY, slow_stream=SlowStream(1, 1.5)) as fm:
        models = models_file(world["tmp"], fm, "stream")
        ok(attest(world, "streaming", "stream", "--models", str(models), "--games", "1"), 1)
        sent = [t for t, api, text in fm.sent]
    seen = json.loads((next(kept.iterdir()) / "stream.json").read_text())
    chunks = [c for c in seen["chunks"] if c.get("text")]
    assert seen["done"] and "".join(c["text"] for c in chunks) == "alpha beta gamma delta", seen
    held = next(i for i in range(len(sent) - 1) if sent[i + 1] - sent[i] > 1.0)  # where the server held the rest
    assert chunks[0]["t"] < sent[held + 1], (chunks[:2], sent)  # the agent had chunk 1 before the rest was sent
    assert chunks[-1]["t"] >= sent[held + 1]


def test_no_entry_for_the_declared_model_is_not_issued_and_plays_nothing(world: dict[str, Any]) -> None:
    for extra in ((), ("--models", str(world["tmp"] / "models-other.json"))):
        (world["tmp"] / "models-other.json").write_text(json.dumps({"models": [
            {"id": "another-model", "api": "openai-chat", "baseUrl": "http://127.0.0.1:9/v1", "apiKeyEnv": KEY_ENV,
             "trainingCutoff": "2020-01-01"}]}))
        out = f"unavailable-{len(extra)}"
        res = attest(world, "honest", out, *extra)
        summary = ok(res, 1)
        assert summary["status"] == "not-issued" and summary["reasons"][0].startswith("model_unavailable"), summary
        assert not (world["tmp"] / "runs" / out / "games").exists()


def test_a_missing_key_is_bad_input_before_any_attempt_unless_workers_read_it(world: dict[str, Any],
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with FakeModel("x", key=REAL_KEY) as fm:
        models = models_file(world["tmp"], fm, "nokey")
        res = attest(world, "honest", "nokey", "--models", str(models))
        assert res.exit_code == 2 and f"apiKeyEnv {KEY_ENV}, which is not set" in res.output, res.output
        assert len(res.stderr.strip().splitlines()) == 1 and not fm.requests  # one line; stdout: the --json doc
        assert json.loads(res.stdout)["code"] == reasons.BAD_INPUT, res.stdout
    assert not list((world["tmp"] / "runs").glob("nokey/games"))
    from acx_oci.services.verifier import models as models_mod

    entry = next(iter(models_mod.load_models(models).values()))
    # A Dask run: the verifier reads no key (each worker reads its own: tests/verifier/test_dask_model.py).
    remote = models_mod.setup(entry, executor=object())
    assert remote is not None and remote.key is None and remote.entry == entry
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    local = models_mod.setup(entry)
    assert local is not None and local.key == REAL_KEY


def test_upstream_down_for_every_game_is_examiner_unreliable(world: dict[str, Any], key_env: None) -> None:
    with FakeModel("x", key=REAL_KEY, fail_with=503) as fm:
        models = models_file(world["tmp"], fm, "down")
        summary = ok(attest(world, "honest", "down", "--models", str(models), "--games", "3"), 1)
    assert summary["reasons"][0].startswith("examiner_unreliable"), summary
    preds = predicates(world["tmp"] / "runs" / "down")
    assert [p["outcome"] for p in preds] == ["lane-error"] * 3


def test_the_model_id_is_part_of_the_rom_digest(world: dict[str, Any], tmp_path: Path) -> None:
    shutil.copy(world["tmp"] / "publisher.key", tmp_path / "publisher.key")
    a = make_cartridge(tmp_path, "a", AGENTS / "llm_agent.py", f"oci:{tmp_path / 'l'}")
    b = make_cartridge(tmp_path, "b", AGENTS / "llm_agent.py", f"oci:{tmp_path / 'l'}", model="acme-small-2026-06")
    assert a["romDigest"] != b["romDigest"]
    shown = ok(cli("inspect", f"oci:{tmp_path / 'l'}:b", "--json"))
    assert shown["runtime"]["model"] == {"api": "openai-chat", "id": "acme-small-2026-06"}
    assert "acme-small-2026-06 over openai-chat" in ok(cli("inspect", f"oci:{tmp_path / 'l'}:b"))


def _partly_right(suite: Path) -> Any:
    """The reference answer for about 60% of the tasks (by a hash of the prompt), an empty one otherwise."""
    right = solve_from_reference(suite)

    def script(req: ModelRequest) -> Any:
        if int(hashlib.sha256(req.prompt.encode()).hexdigest(), 16) % 10 < 6:
            return right(req)
        return files_answer({})
    return script


@pytest.mark.slow
def test_llm_agent_attested_on_the_registry_names_the_model(registry: str, tmp_path: Path, key_env: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    sdk_python()
    ok(cli("keygen", str(tmp_path / "publisher")))
    ok(cli("keygen", str(tmp_path / "verifier")))
    cart = make_cartridge(tmp_path, "llm", AGENTS / "llm_agent.py", f"{registry}/acme/llm-agent")
    ref = f"{registry}/acme/llm-agent:llm"
    bench = ok(cli("benchmark", "push", str(BENCH_PY), f"{registry}/acme/bench-py:2026.07.1", "--seal-to",
                   str(tmp_path / "verifier.did.json"), "--allow-uncertified", "--json"))
    did = load_identity(tmp_path / "verifier.key").did
    with FakeModel(_partly_right(BENCH_PY), key=REAL_KEY) as fm:
        models = models_file(tmp_path, fm, "main", dataUse="unknown")
        summary = ok(cli("attest", ref, "--benchmark", f"{registry}/acme/bench-py:2026.07.1", "--key",
                         str(tmp_path / "verifier.key"), "--issuer", did, "--state", str(tmp_path / "state"), "-o",
                         str(tmp_path / "att"), "--jobs", "2", "--models", str(models), "--json"))  # the gate's floor
    assert summary["issued"] is True, summary
    only_allowed(fm)
    preds = predicates(tmp_path / "att")
    assert all(p["model"]["requests"] >= 1 and p["model"]["transcriptDigest"].startswith("sha256:") for p in preds)
    cred = json.loads((tmp_path / "att" / "credential.json").read_text())
    result = next(r for r in cred["credentialSubject"]["result"] if "acx:model" in r)
    assert result["acx:model"] == {"id": MODEL, "api": "openai-chat"} and result["acx:modelDataUse"] == "unknown"
    assert result["acx:modelUsage"]["requests"] == sum(p["model"]["requests"] for p in preds)
    assert result["acx:trainingCutoff"] == "2020-01-01"  # the verifier's models file, never the ROM's claim
    assert result["acx:postCutoff"] == {"cutoff": "2020-01-01", "source": "models-file",  # every exam is later
                                        "qualifying": result["acx:gamesPlayed"], "drawn": result["acx:gamesPlayed"]}
    trust = tmp_path / "trust.yaml"
    trust.write_text(f"verifiers: [{{id: '{did}'}}]\n"
                     f"benchmarks: [{{id: {bench['id']}, version: '{bench['version']}', "
                     f"digest: '{bench['benchmarkDigest']}'}}]\n")
    # The suite was pushed --allow-uncertified: by default that level does not count (issue 34.4) ...
    refused = cli("resolve", ref, "--trust", str(trust), "--json")
    assert json.loads(refused.stdout)["capabilities"][0]["effective"] != "VERIFIED"
    assert "exams_uncertified" in refused.stdout
    trust.write_text(trust.read_text() + "uncertifiedExams: allow\n")  # ... the consumer's one-line opt-in
    resolved = ok(cli("resolve", ref, "--trust", str(trust), "--json"))
    cap = resolved["capabilities"][0]
    assert cap["effective"] == "VERIFIED" and cap["model"] == {"id": MODEL, "api": "openai-chat", "dataUse": "unknown"}
    text = ok(cli("resolve", ref, "--trust", str(trust)))
    assert f"model {MODEL} over openai-chat" in text and "may train on them" in text
    level = summary["acxLevel"]
    ok(cli("resolve", ref, "--trust", str(trust), "--require", f"implement-feature>={level}@model={MODEL}"))
    res = cli("resolve", ref, "--trust", str(trust), "--require",
              f"implement-feature>={level}@model=acme-small-2026-06")
    assert res.exit_code == 1 and "no verified level earned with model acme-small-2026-06" in res.output
    # The trust file can narrow the models and demand no-training terms.
    trust.write_text(trust.read_text() + "models: [acme-small-2026-06]\n")
    assert ok(cli("resolve", ref, "--trust", str(trust), "--json"))["capabilities"][0]["effective"] != "VERIFIED"
    trust.write_text(trust.read_text().replace("models: [acme-small-2026-06]\n", "modelDataUse: no-training\n"))
    rejected = ok(cli("resolve", ref, "--trust", str(trust), "--json"))["capabilities"][0]
    assert rejected["effective"] != "VERIFIED"
    assert "held_out_exposed" in {c for r in rejected["rejected"] for c in r["codes"]}
    assert cart["romDigest"] == summary["romDigest"]


@pytest.fixture(autouse=True)
def _no_leftover_proxies() -> Iterator[None]:
    yield
    import threading

    assert not [t for t in threading.enumerate() if t.name == "acx-model-proxy"], "a model proxy outlived its game"
