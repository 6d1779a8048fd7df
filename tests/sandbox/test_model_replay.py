"""Replay by a second verifier (issue 22 item 6): ``transcripts export`` re-seals a model-calling run's
transcripts to an auditor, and ``attest --model-replay`` reproduces the run from the recordings alone.

Real parts: an OCI image layout store, bubblewrap sandboxes, the verifier's model proxy on a Unix socket,
the untrusted relay inside the sandbox, an agent that calls the model with urllib, and the local upstream
of tests/support/fakemodel.py (OpenAI's chat-completions wire format, with ``usage``) on 127.0.0.1 — stopped
before the auditor replays, so any upstream request would fail.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from acx_oci.cli import main
from acx_oci.crypto import canonical, recipient_from_identity, unseal
from acx_oci.crypto.seal import seal
from acx_oci.errors import VerificationError
from acx_oci.trust import load_identity
from tests.support.fakemodel import FakeModel, ModelRequest
from tests.support.jsondoc import check_document

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH_PY = ROOT / "testdata" / "bench-py"
CAP = "implement-feature[python+pytest]@software-engineering"
MODEL = "acme-fake-2026-06"
UPSTREAM_KEY = "sk-upstream-REAL-KEY-7d1c0e"
INFO = b"acx-oci/game-transcript/v1"
GAMES = 30  # the gate's floor: fewer would be a look, which counts no attempt and cannot be exported

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian 'bubblewrap') not installed")

# A deterministic agent: it asks the model for a draft, then (a second turn carrying the draft) for the final
# file, and writes the answer. Editing the recorded draft therefore changes its second request. (A stdlib
# client on purpose: the replay must hold for any client, and this one needs nothing installed in the sandbox.)
AGENT = '''\
import json, os, urllib.request
from pathlib import Path


def ask(messages):
    body = json.dumps({"model": os.environ["ACX_MODEL_ID"], "messages": messages, "temperature": 0}).encode()
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body, method="POST",
                                 headers={"content-type": "application/json",
                                          "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)["choices"][0]["message"]["content"]


ws = Path(os.environ["ACX_WORKSPACE"])
task = Path(os.environ["ACX_PROMPT_FILE"]).read_text() + "\\n\\n" + (ws / "solution.py").read_text()
messages = [{"role": "user", "content": task}]
draft = ask(messages)
messages += [{"role": "assistant", "content": draft}, {"role": "user", "content": "Now the final solution.py."}]
(ws / "solution.py").write_text(ask(messages))
print("asked the model twice")
'''


def _repertoire() -> dict[str, str]:
    spec = importlib.util.spec_from_file_location("simple_agent", ROOT / "testdata" / "agents" / "simple_agent.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return dict(mod.REPERTOIRE)


def upstream() -> FakeModel:
    """The "model" writes the function the stub asks for from simple_agent's (sometimes wrong) repertoire."""
    repertoire = _repertoire()

    def answer(req: ModelRequest) -> str:
        first = next(m["content"] for m in req.messages if m["role"] == "user")
        m = re.search(r"^def (\w+)\(([^)]*)\):", first, re.M)
        name, sig = (m.group(1), m.group(2)) if m else ("unknown", "")
        return f"def {name}({sig}):\n    {repertoire.get(name, 'return None')}\n"

    return FakeModel(answer, key=UPSTREAM_KEY, models=[MODEL])


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def ok(res: Result, code: int = 0) -> Any:
    assert res.exit_code == code, res.output
    return json.loads(res.output) if res.output.lstrip().startswith("{") else res.output


def predicates(out: Path) -> list[dict[str, Any]]:
    return [json.loads(base64.b64decode(json.loads(p.read_bytes())["payload"]))["predicate"]
            for p in sorted((out / "games").glob("*.dsse.json"))]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("replay")
    for who in ("publisher", "verifier", "auditor"):
        ok(cli("keygen", str(tmp / who)))
    layout = f"oci:{tmp / 'layout'}"
    d = tmp / "llm-agent"
    ok(cli("cartridge", "init", str(d), "--id", "io.example/llm-agent", "--version", "1.0.0", "--capability", CAP,
           "--runtime", "python3 /rom/skills/agent.py", "--model", f"openai-chat:{MODEL}"))
    (d / "skills" / "agent.py").write_text(AGENT)
    ok(cli("cartridge", "push", str(d), f"{layout}:llm-agent", "--key", str(tmp / "publisher.key")))
    # The benchmark is sealed to both verifiers: the auditor can unseal the held-out slice too.
    ok(cli("benchmark", "push", str(BENCH_PY), f"{layout}:bench", "--seal-to", str(tmp / "verifier.did.json"),
           "--seal-to", str(tmp / "auditor.did.json"), "--allow-uncertified"))
    model = upstream()
    (tmp / "upstream.key").write_text(UPSTREAM_KEY + "\n")
    # The cutoff (2025-06-01) leaves out the suite's earlier exams: a replay that took the ROM's cutoff (none)
    # instead of the export's would draw other tasks.
    (tmp / "models.yaml").write_text(
        f"models:\n- {{id: {MODEL}, api: openai-chat, baseUrl: '{model.base_url}', "
        f"apiKeyFile: '{tmp / 'upstream.key'}', trainingCutoff: '2025-06-01', maxRequestsPerGame: 4, "
        "maxTokensPerGame: 100000, dataUse: no-training}\n")
    verifier, auditor = load_identity(tmp / "verifier.key"), load_identity(tmp / "auditor.key")
    original = ok(cli("attest", f"{layout}:llm-agent", "--benchmark", f"{layout}:bench", "--key",
                      str(tmp / "verifier.key"), "--issuer", verifier.did, "--state", str(tmp / "state-v"), "-o",
                      str(tmp / "att"), "--models", str(tmp / "models.yaml"), "--games", str(GAMES), "--cooldown",
                      "0", "--jobs", "3", "--json"), 1)
    seen = model.requests
    res = cli("transcripts", "export", str(tmp / "att"), "--key", str(tmp / "verifier.key"), "--to",
              str(tmp / "auditor.did.json"), "-o", str(tmp / "export"), "--json")
    exported = check_document("transcripts export", res.stdout, res.exit_code)  # its shipped schema
    model.stop()  # the auditor's replay has no model to call
    yield {"tmp": tmp, "layout": layout, "verifier": verifier, "auditor": auditor, "original": original,
           "seen": seen, "upstream": model, "exported": exported}


def replay(world: Any, name: str, export: Path, *extra: str, as_json: bool = True) -> Result:
    tmp = world["tmp"]
    return cli("attest", f"{world['layout']}:llm-agent", "--benchmark", f"{world['layout']}:bench", "--key",
               str(tmp / "auditor.key"), "--issuer", world["auditor"].did, "--state", str(tmp / f"state-{name}"),
               "-o", str(tmp / name), "--cooldown", "0", "--jobs", "3", "--model-replay", str(export), *extra,
               *(["--json"] if as_json else []))


def test_the_original_run_called_the_model_through_the_proxy(world: Any) -> None:
    original, tmp = world["original"], world["tmp"]
    # 30 games leave sigma above the gate: NOT ISSUED, a counted attempt with a signed record (the real-agent
    # page's test replays an issued run and checks its credential's acx:modelReplay)
    assert original["status"] == "not-issued" and "look" not in original, original["reasons"]
    assert (tmp / "att" / "attempt-record.json").is_file()
    preds = predicates(tmp / "att")
    assert len(preds) == GAMES and {p["outcome"] for p in preds} <= {"certified-pass", "model-fail"}
    assert all(p["model"]["requests"] == 2 and p["model"]["transcriptDigest"].startswith("sha256:") for p in preds)
    # The upstream saw two requests a game, each with the verifier's real key (never the sandbox's placeholder).
    seen = world["seen"]
    assert len(seen) == 2 * GAMES and {r.path for r in seen} == {"/v1/chat/completions"}
    assert {r.headers.get("authorization") for r in seen} == {f"Bearer {UPSTREAM_KEY}"}
    result = json.loads((tmp / "att" / "result.json").read_text())
    assert result["model"] == {"id": MODEL, "api": "openai-chat", "trainingCutoff": "2025-06-01",
                               "maxTokensPerGame": 100000, "maxRequestsPerGame": 4, "dataUse": "no-training"}


def test_export_reseals_the_transcripts_to_the_auditor_only(world: Any) -> None:
    tmp, exported = world["tmp"], world["exported"]
    doc = json.loads((tmp / "export" / "export.json").read_text())
    original = world["original"]
    assert exported["games"] == exported["transcripts"] == GAMES
    assert doc["schema"] == "acx.model-replay/1" and doc["issuer"] == world["verifier"].did
    assert doc["cartridge"]["romDigest"] == original["romDigest"]
    assert (doc["run"]["games"], doc["run"]["sigmaMax"], doc["run"]["minGames"]) == (GAMES, 1.5, 30)
    assert (doc["run"]["mu"], doc["run"]["sigma"], doc["run"]["acxLevel"], doc["run"]["status"]) == \
        (original["mu"], original["sigma"], original["acxLevel"], "not-issued")
    assert doc["model"]["trainingCutoff"] == "2025-06-01" and doc["model"]["maxRequestsPerGame"] == 4
    text = (tmp / "export" / "export.json").read_text()
    assert "baseUrl" not in text and UPSTREAM_KEY not in text and "127.0.0.1" not in text
    result = json.loads((tmp / "att" / "result.json").read_text())
    assert [(g["game"], g["taskCommitment"], g["outcome"]) for g in doc["games"]] == \
        [(g["game"], g["taskCommitment"], g["outcome"]) for g in result["gameRecords"]]
    for g in doc["games"]:
        sealed = json.loads((tmp / "export" / g["transcript"]).read_bytes())
        with pytest.raises(VerificationError):  # sealed to the auditor, not to the verifier that ran it
            unseal(sealed, world["verifier"], INFO)
        transcript = json.loads(unseal(sealed, world["auditor"], INFO))
        assert transcript["model"]["replay"] is False and len(transcript["model"]["exchanges"]) == 2
        assert transcript["taskId"].encode() not in (tmp / "export" / "export.json").read_bytes()
        assert UPSTREAM_KEY.encode() not in canonical(transcript)
        assert g["modelTranscriptDigest"] == predicates(tmp / "att")[g["game"] - 1]["model"]["transcriptDigest"]


def test_replay_reproduces_the_run_with_zero_upstream_requests(world: Any) -> None:
    tmp, original = world["tmp"], world["original"]
    before = len(world["upstream"].requests)
    res = replay(world, "replay", tmp / "export")
    summary = ok(res, 1)  # the original was not issued, and everything reproduced
    assert len(world["upstream"].requests) == before  # and the upstream is stopped: nothing could have reached it
    # Nothing went to a provider, so the auditor's state remembers no exposure (the verifier's does).
    assert ok(cli("benchmark", "exposures", "--state", str(tmp / "state-replay"), "--json"))["exposures"] == []
    assert len(ok(cli("benchmark", "exposures", "--state", str(tmp / "state-v"), "--json"))["exposures"]) == GAMES
    assert summary["replayDiffers"] == [] and summary["replay"]["reproduced"] is True
    assert summary["replay"]["recordSignatures"] == "verified"  # the original issuer is a did:key
    for k in ("mu", "sigma", "acxLevel", "games", "passRate", "careerTier"):
        assert summary[k] == original[k], k
    rows = summary["replay"]["games"]
    assert [r["game"] for r in rows] == list(range(1, GAMES + 1))
    assert all(r["reproduced"] and r["recordingIntact"] and r["outcome"] == r["originalOutcome"] for r in rows)
    first, again = predicates(tmp / "att"), predicates(tmp / "replay")
    assert [(p["taskCommitment"], p["outcome"], p["ratingAfter"]) for p in first] == \
        [(p["taskCommitment"], p["outcome"], p["ratingAfter"]) for p in again]
    assert all(p["model"]["requests"] == 2 and p["model"]["refused"] == 0 for p in again)
    # The auditor's own transcripts are sealed to it and say they were answered from the recording.
    sealed = json.loads((tmp / "replay" / "transcripts" / "game-0001.sealed.json").read_bytes())
    assert json.loads(unseal(sealed, world["auditor"], INFO))["model"]["replay"] is True
    assert summary["status"] == "not-issued" and (tmp / "replay" / "attempt-record.json").is_file()
    run = json.loads((tmp / "replay" / "result.json").read_text())
    assert run["model"]["id"] == MODEL and run["model"]["trainingCutoff"] == "2025-06-01"


def test_an_edited_response_makes_that_game_a_replay_divergent_lane_error(world: Any) -> None:
    tmp = world["tmp"]
    edited = tmp / "export-edited"
    shutil.copytree(tmp / "export", edited)
    victim = 2
    path = edited / "transcripts" / f"game-{victim:04d}.sealed.json"
    transcript = json.loads(unseal(json.loads(path.read_bytes()), world["auditor"], INFO))
    answer = transcript["model"]["exchanges"][0]["response"]
    body = json.loads(base64.b64decode(answer["bodyB64"]))
    body["choices"][0]["message"]["content"] += "# edited\n"
    answer["bodyB64"] = base64.b64encode(json.dumps(body).encode()).decode()
    path.write_bytes(canonical(seal(canonical(transcript), [recipient_from_identity(world["auditor"])], INFO)))
    before = len(world["upstream"].requests)
    summary = ok(replay(world, "replay-edited", edited), 1)
    assert len(world["upstream"].requests) == before
    assert summary["issued"] is False and summary["replayDiffers"] == [victim]
    assert any(r.startswith(f"replay_divergent: game(s) {victim} did not reproduce") for r in summary["reasons"])
    assert any(r.startswith(f"recording_altered: the recording of game(s) {victim} ") for r in summary["reasons"])
    row = summary["replay"]["games"][victim - 1]
    assert row["outcome"] == "lane-error" and row["detail"].startswith("replay_divergent:")
    assert row["recordingIntact"] is False
    assert all(r["reproduced"] for r in summary["replay"]["games"] if r["game"] != victim)
    result = json.loads((tmp / "replay-edited" / "result.json").read_text())
    game = result["gameRecords"][victim - 1]
    assert game["outcome"] == "lane-error" and game["detail"].startswith("replay_divergent:")
    pred = predicates(tmp / "replay-edited")[victim - 1]
    assert pred["model"]["requests"] == 2 and pred["model"]["refused"] == 1  # the 409 answered the second request
    # The human text names the game.
    text = ok(replay(world, "replay-edited-text", edited, as_json=False), 1)
    assert f"replay: game(s) {victim} did not reproduce the original outcome" in text
    assert f"game {victim}: lane-error (original: " in text


def test_replay_refusals_are_one_line(world: Any) -> None:
    tmp, layout = world["tmp"], world["layout"]
    # Not an attest output; a key the transcripts are not sealed to.
    (tmp / "not-a-run").mkdir()
    res = cli("transcripts", "export", str(tmp / "not-a-run"), "--key", str(tmp / "verifier.key"), "--to",
              str(tmp / "auditor.did.json"), "-o", str(tmp / "x1"))
    assert res.exit_code == 2 and res.output.startswith("error: ") and "not an attest output" in res.output
    assert res.output.count("\n") == 1
    res = cli("transcripts", "export", str(tmp / "att"), "--key", str(tmp / "auditor.key"), "--to",
              str(tmp / "auditor.did.json"), "-o", str(tmp / "x2"))
    assert res.exit_code == 2 and "cannot unseal" in res.output and res.output.count("\n") == 1
    assert not (tmp / "x2" / "export.json").exists()
    # A run folder whose signed record was changed does not export (exit 1, nothing written).
    shutil.copytree(tmp / "att", tmp / "att-tampered")
    record = tmp / "att-tampered" / "games" / "game-0001.dsse.json"
    record.write_bytes(record.read_bytes() + b" ")
    res = cli("transcripts", "export", str(tmp / "att-tampered"), "--key", str(tmp / "verifier.key"), "--to",
              str(tmp / "auditor.did.json"), "-o", str(tmp / "x3"))
    assert res.exit_code == 1 and "game 1's signed record" in res.output and not (tmp / "x3").exists()
    # Another ROM (same agent, another version): refused before anything is played.
    d = tmp / "llm-agent"
    ok(cli("cartridge", "init", str(tmp / "other"), "--id", "io.example/llm-agent", "--version", "1.0.1",
           "--capability", CAP, "--runtime", "python3 /rom/skills/agent.py", "--model", f"openai-chat:{MODEL}"))
    shutil.copy(d / "skills" / "agent.py", tmp / "other" / "skills" / "agent.py")
    ok(cli("cartridge", "push", str(tmp / "other"), f"{layout}:other", "--key", str(tmp / "publisher.key")))
    res = cli("attest", f"{layout}:other", "--benchmark", f"{layout}:bench", "--key", str(tmp / "auditor.key"),
              "--issuer", world["auditor"].did, "--state", str(tmp / "state-other"), "-o", str(tmp / "other-run"),
              "--cooldown", "0", "--model-replay", str(tmp / "export"), "--json")
    refused = ok(res, 2)
    assert refused["status"] == "refused" and refused["reasons"][0].startswith("replay_mismatch: the export is of ROM")
    assert not (tmp / "other-run" / "games").exists()
    # The original's parameters are the replay's: another --games is a usage error.
    res = replay(world, "replay-games", tmp / "export", "--games", "5")
    assert res.exit_code == 2 and f"--games 5 differs from the original run's {GAMES}" in res.output
    # --models is optional, but must agree with the export's model.
    (tmp / "other-models.yaml").write_text(
        "models:\n- {id: another-model, api: openai-chat, baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: NOPE, "
        "trainingCutoff: '2025-06-01'}\n")
    refused = ok(replay(world, "replay-models", tmp / "export", "--models", str(tmp / "other-models.yaml")), 2)
    assert refused["reasons"][0].startswith("replay_mismatch: --models has no entry for the export's model")
    # An export without its export.json is not one.
    (tmp / "empty-export").mkdir()
    res = replay(world, "replay-empty", tmp / "empty-export")
    assert res.exit_code == 2 and "has no export.json" in res.output
