"""Model egress containment probes (issue 22 item 7), with real bubblewrap, a real proxy and the real relay.

An honest setup proves; a deliberately broken one (the real key leaked into the agent's environment, a proxy
that forwards what it should refuse) does not, the proof names the probe that failed, the games are
withheld and the run is NOT ISSUED ``containment_unproven``. The probes never call the model's upstream.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from acx_oci.cli import main
from acx_oci.egress import ModelSetup
from acx_oci.egress import proxy as proxy_mod
from acx_oci.model import WITHHELD
from acx_oci.model import modelapi as ma
from acx_oci.sandbox import PREFIX, model_verdicts, staging_dir
from acx_oci.sandbox.modelprobes import CASES
from acx_oci.solvers import RomSolver, containment, game_spec, prove, prove_game
from acx_oci.solvers import rom as rom_mod
from acx_oci.trust import load_identity

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian 'bubblewrap') not installed")

ROOT = Path(__file__).resolve().parent.parent.parent
REAL_KEY = "sk-live-acx-probe-REAL-7f3c9a41d2e85b60"
MODEL = ma.DeclaredModel("openai-chat", "acme-large-2026-06")
RUNTIME = {"command": ["true"], "network": "model", "model": MODEL.to_json()}
KEY_PROBES = {"the API keys the agent sees", "the real key in the agent's environment",
              "the real key in /proc/self/environ", "the real key in /proc/1/environ",
              "the real key in any /proc/*/environ or cmdline", "the real key in a response through the proxy"}
PROXY_PROBES = {"control: the model API through the relay", "the proxy's record", "what reached the upstream",
                *(c.label for c in CASES)}


class Upstream:
    """Stands for the provider the models file names: counts every request; the probes must send none."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        seen = self.hits

        class H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                seen.append(self.path)
                self.send_response(500)
                self.send_header("content-length", "0")
                self.end_headers()

            do_GET = do_POST

            def log_message(self, *args: Any) -> None:
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.port = int(self.server.server_address[1])

    def entry(self, **kw: Any) -> ma.ModelEntry:
        return ma.ModelEntry(id=MODEL.id, api=MODEL.api, base_url=f"http://127.0.0.1:{self.port}/v1",
                             api_key_env="ACX_TEST_MODEL_KEY", max_requests_per_game=1, **kw)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    u = Upstream()
    yield u
    u.server.shutdown()
    u.server.server_close()


@pytest.fixture
def rom_dir() -> Iterator[Path]:
    d = staging_dir("acx-test-rom-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def by_name(proof: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in proof["probes"]}


def failed(proof: dict[str, Any]) -> set[str]:
    return {p["name"].removeprefix(PREFIX) for p in proof["probes"] if not p["ok"]}


def test_honest_setup_proves_in_the_games_exact_spec(upstream: Upstream, rom_dir: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    specs: list[Any] = []
    real_check = containment.check

    def spy(secrets: Any, spec: Any, endpoints: Any = ()) -> dict[str, Any]:
        specs.append(spec)
        return real_check(secrets, spec, endpoints)

    monkeypatch.setattr(containment, "check", spy)
    proof = prove((Path("/etc/acx-no-such-key"),), rom_dir, RUNTIME, model=ModelSetup(upstream.entry(), REAL_KEY))
    assert proof["proven"] is True, [p for p in proof["probes"] if not p["ok"]]
    probes = by_name(proof)
    # every model probe is there, with its known verdict
    assert {PREFIX + n for n in KEY_PROBES | PROXY_PROBES} <= set(probes)
    assert probes["connect to the model upstream directly"]["observed"] == "ConnectionRefusedError"
    for c in CASES:
        assert probes[PREFIX + c.label]["observed"].startswith(f"{c.status} {c.code};")
    assert probes[PREFIX + "the proxy's record"]["observed"] == {"requests": 1, "refused": len(CASES)}
    assert proof["modelEgress"]["socket"] == ma.SOCKET_INSIDE
    # the game sandbox's probes ran in a game's spec: the same env and binds, the socket bound as a game's
    game = specs[0]
    assert [dst for _, dst in game.rw_binds] == ["/workspace", ma.SOCKET_INSIDE]
    sock = containment.model_socket(game)
    ws = dict((dst, src) for src, dst in game.rw_binds)["/workspace"]
    task = dict((dst, src) for src, dst in game.ro_binds)["/task"]
    # ... under a host uid of its own (a root verifier's; sandbox.uids), as each game has
    want = game_spec(rom_dir, RUNTIME, workspace=ws, task_dir=task, model_socket=sock)
    assert game == dataclasses.replace(want, host_uid=game.host_uid, host_gid=game.host_gid)
    assert (game.host_uid != want.host_uid) == (os.geteuid() == 0)
    # the provider was never called, the proof never names where it lives nor the key
    assert upstream.hits == []
    text = json.dumps(proof)
    assert REAL_KEY not in text and str(upstream.port) not in text


def test_real_key_leaked_into_the_sandbox_fails_and_withholds(upstream: Upstream, rom_dir: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    honest = rom_mod.model_env
    monkeypatch.setattr(rom_mod, "model_env", lambda m: {**honest(m), "OPENAI_API_KEY": REAL_KEY})
    setup = ModelSetup(upstream.entry(), REAL_KEY)
    proof = prove_game((), rom_dir, RUNTIME, model=setup)
    assert proof["proven"] is False
    assert {"the API keys the agent sees", "the real key in the agent's environment",
            "the real key in /proc/self/environ", "the real key in any /proc/*/environ or cmdline"} <= failed(proof)
    assert not failed(proof) & PROXY_PROBES  # the proxy itself still behaved
    assert REAL_KEY not in json.dumps(proof)  # the proof says where, never what
    result = RomSolver(rom_dir, RUNTIME, proof, model=setup).solve({"id": "t", "grader": {"kind": "pytest"}},
                                                                   "sha256:" + "0" * 64)
    assert result.outcome == WITHHELD and "the real key in the agent's environment" in result.detail
    assert upstream.hits == []


def _forward_everything(api: ma.Api, model_id: str, *, method: str, target: str, headers: list[tuple[str, str]],
                        host_ok: tuple[str, ...], body: bytes) -> ma.Refusal | dict[str, Any]:
    try:
        doc = json.loads(body or b"{}")
    except ValueError:
        doc = {}
    return doc if isinstance(doc, dict) else {}


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # its CONNECT path breaks
def test_a_proxy_that_forwards_forbidden_requests_fails(upstream: Upstream, rom_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proxy_mod.ma, "check_request", _forward_everything)
    proof = prove_game((), rom_dir, RUNTIME, model=ModelSetup(upstream.entry(), REAL_KEY))
    assert proof["proven"] is False
    bad = failed(proof)
    assert {c.label for c in CASES} | {"the proxy's record", "what reached the upstream"} <= bad, bad
    assert not bad & KEY_PROBES
    probes = by_name(proof)
    other = probes[PREFIX + "POST /v1/files (another path) through the proxy"]["observed"]
    assert other.startswith("409 probe_upstream") and "forwarded" in other  # reached the stand-in, not the provider
    assert any("acme-large-2026-06-acx-probe-other" in s for s in probes[PREFIX + "what reached the upstream"]
               ["observed"])
    assert upstream.hits == []  # even a broken proxy cannot reach the provider during the probes


def test_a_replay_setup_proves_with_a_throwaway_key(upstream: Upstream, rom_dir: Path) -> None:
    proof = prove_game((), rom_dir, RUNTIME, model=ModelSetup(upstream.entry(), None))
    assert proof["proven"] is True, failed(proof)
    assert by_name(proof)[PREFIX + "what reached the upstream"]["observed"] == \
        [f"POST /v1/chat/completions model={MODEL.id} key injected"]
    assert upstream.hits == []


def test_prove_needs_the_models_entry_of_a_model_rom(rom_dir: Path, upstream: Upstream) -> None:
    with pytest.raises(Exception, match="models file"):
        prove_game((), rom_dir, RUNTIME)
    other = ma.ModelEntry(id="another", api="openai-chat", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(Exception, match="not the ROM's declared model"):
        prove_game((), rom_dir, RUNTIME, model=ModelSetup(other, REAL_KEY))


def _report(**over: Any) -> dict[str, Any]:
    env = {"OPENAI_API_KEY": ma.PLACEHOLDER_KEY, "ANTHROPIC_API_KEY": ma.PLACEHOLDER_KEY, "PATH": "/usr/bin"}
    environ = "\n".join(f"{k}={v}" for k, v in env.items())
    doc: dict[str, Any] = {"env": env, "responses": {"allowed": {"raw": "HTTP/1.1 409 X\r\n\r\n{}"}},
                           "proc": {"self": {"environ": environ, "cmdline": "python3"},
                                    "1": {"environError": "PermissionError", "cmdline": "bwrap"}}}
    doc.update(over)
    return doc


def test_key_verdicts_on_reports() -> None:
    """The host-side judgement alone: a key in a response, an unreadable /proc/self/environ, a truncated blob."""
    def bad(report: dict[str, Any]) -> set[str]:
        probes = model_verdicts(report, {}, {}, [], MODEL, REAL_KEY)
        assert REAL_KEY not in json.dumps(probes)
        return {p["name"].removeprefix(PREFIX) for p in probes if not p["ok"]} & KEY_PROBES

    assert bad(_report()) == set()  # /proc/1/environ unreadable by the agent is fine
    leaked = {"allowed": {"raw": "HTTP/1.1 409 X\r\n\r\n{\"echo\": \"Bearer " + REAL_KEY + "\"}"}}
    assert bad(_report(responses=leaked)) == {"the real key in a response through the proxy"}
    unreadable = _report()
    unreadable["proc"]["self"] = {"environError": "PermissionError"}
    assert bad(unreadable) == {"the real key in /proc/self/environ"}
    big = _report()
    big["proc"]["7"] = {"environ": "", "environTruncated": True}
    assert bad(big) == {"the real key in any /proc/*/environ or cmdline"}


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_sandbox_check_models(upstream: Upstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "models.yaml"
    models.write_text("models:\n"
                      f"  - {{id: {MODEL.id}, api: {MODEL.api}, baseUrl: 'http://127.0.0.1:{upstream.port}/v1',"
                      " apiKeyEnv: ACX_TEST_MODEL_KEY, trainingCutoff: '2025-01-01'}\n"
                      "  - {id: other, api: anthropic-messages, baseUrl: 'http://127.0.0.1:1/v1',"
                      " apiKeyEnv: ACX_TEST_MODEL_KEY, trainingCutoff: '2025-01-01'}\n")
    monkeypatch.setenv("ACX_TEST_MODEL_KEY", REAL_KEY)
    res = cli("sandbox", "check", "--models", str(models), "--model", f"{MODEL.api}:{MODEL.id}", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["proven"] is True and [p["model"] for p in doc["proofs"]] == [MODEL.to_json()]
    assert {PREFIX + n for n in KEY_PROBES | PROXY_PROBES} <= {p["name"] for p in doc["proofs"][0]["probes"]}
    assert REAL_KEY not in res.output
    text = cli("sandbox", "check", "--models", str(models), "--model", f"{MODEL.api}:{MODEL.id}")
    assert text.exit_code == 0 and "model egress: CONNECT through the proxy" in text.output
    assert "containment PROVEN" in text.output
    assert cli("sandbox", "check", "--models", str(models), "--model", "openai-chat:nope").exit_code == 2
    assert cli("sandbox", "check", "--model", f"{MODEL.api}:{MODEL.id}").exit_code == 2
    honest = rom_mod.model_env
    monkeypatch.setattr(rom_mod, "model_env", lambda m: {**honest(m), "ANTHROPIC_API_KEY": REAL_KEY})
    broken = cli("sandbox", "check", "--models", str(models), "--model", f"{MODEL.api}:{MODEL.id}")
    assert broken.exit_code == 1 and "FAIL  model egress: the API keys the agent sees" in broken.output
    assert REAL_KEY not in broken.output and upstream.hits == []


@pytest.fixture(scope="module")
def model_world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A cartridge whose ROM declares the model (its agent never calls it), and the sealed bench-py suite."""
    tmp = tmp_path_factory.mktemp("model-probes")
    for who in ("publisher", "verifier"):
        assert cli("keygen", str(tmp / who)).exit_code == 0
    layout = f"oci:{tmp / 'layout'}"
    d = tmp / "agent"
    res = cli("cartridge", "init", str(d), "--id", "io.example/llm", "--version", "1.0.0", "--capability",
              "implement-feature[python+pytest]@software-engineering", "--runtime", "python3 /rom/skills/agent.py",
              "--model", f"{MODEL.api}:{MODEL.id}")
    assert res.exit_code == 0, res.output
    shutil.copy(ROOT / "testdata" / "agents" / "simple_agent.py", d / "skills" / "agent.py")
    res = cli("cartridge", "push", str(d), f"{layout}:llm", "--key", str(tmp / "publisher.key"))
    assert res.exit_code == 0, res.output
    res = cli("benchmark", "push", str(ROOT / "testdata" / "bench-py"), f"{layout}:bench", "--seal-to",
              str(tmp / "verifier.did.json"), "--allow-uncertified")
    assert res.exit_code == 0, res.output
    return {"tmp": tmp, "layout": layout}


def _attest(world: dict[str, Any], upstream: Upstream, out: str) -> tuple[dict[str, Any], Path]:
    tmp = world["tmp"]
    models = tmp / f"models-{out}.yaml"
    models.write_text(f"models:\n  - {{id: {MODEL.id}, api: {MODEL.api}, baseUrl: 'http://127.0.0.1:"
                      f"{upstream.port}/v1', apiKeyEnv: ACX_TEST_MODEL_KEY, trainingCutoff: '2000-01-01'}}\n")
    did = load_identity(tmp / "verifier.key").did
    res = cli("attest", f"{world['layout']}:llm", "--benchmark", f"{world['layout']}:bench", "--key",
              str(tmp / "verifier.key"), "--issuer", did, "--state", str(tmp / f"state-{out}"), "-o",
              str(tmp / out), "--games", "2", "--models", str(models), "--json")
    assert res.exit_code == 1, res.output  # 2 games never pass the gate: NOT ISSUED either way
    return json.loads(res.output), tmp / out


def _containments(out: Path) -> list[dict[str, Any]]:
    return [json.loads(base64.b64decode(json.loads(p.read_bytes())["payload"]))["predicate"]
            for p in sorted((out / "games").glob("*.dsse.json"))]


def test_attest_records_model_egress_proof(model_world: dict[str, Any], upstream: Upstream,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACX_TEST_MODEL_KEY", REAL_KEY)
    summary, out = _attest(model_world, upstream, "honest")
    assert not any(r.startswith("containment_unproven") for r in summary["reasons"]), summary["reasons"]
    preds = _containments(out)
    assert len(preds) == 2
    for pred in preds:
        names = {p["name"] for p in pred["containment"]["probes"]}
        assert pred["containment"]["proven"] is True and pred["outcome"] != WITHHELD
        assert {PREFIX + n for n in KEY_PROBES | PROXY_PROBES} <= names
    assert upstream.hits == []  # the agent never calls the model, and the probes never do
    assert REAL_KEY.encode() not in b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())


def test_attest_with_a_leaked_key_is_containment_unproven(model_world: dict[str, Any], upstream: Upstream,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACX_TEST_MODEL_KEY", REAL_KEY)
    honest = rom_mod.model_env
    monkeypatch.setattr(rom_mod, "model_env", lambda m: {**honest(m), "OPENAI_API_KEY": REAL_KEY})
    summary, out = _attest(model_world, upstream, "leak")
    assert summary["issued"] is False and summary["reasons"][0].startswith("containment_unproven")
    preds = _containments(out)
    assert preds and all(p["outcome"] == WITHHELD and p["containment"]["proven"] is False for p in preds)
    bad = {p["name"] for p in preds[0]["containment"]["probes"] if not p["ok"]}
    assert PREFIX + "the real key in the agent's environment" in bad
    assert not (out / "credential.json").exists()
    assert REAL_KEY.encode() not in b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert upstream.hits == []
