"""Every command with ``--json`` prints exactly one JSON document on stdout, on success and on failure,
and the document validates against the schema the package ships for it (``acx_oci/schemas/cli/``).

The commands are read from the click tree, so a new command fails here until it has a schema, a
success case and a failure case. Everything runs against real stores: the Distribution registry
fixture, ``oci:`` layouts and files on disk; one module-scoped world (keys, a pushed cartridge, a
sealed benchmark, one attest run) serves every case.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest

from acx_oci import reasons
from acx_oci.cli import load_all

from .support.cli import cli
from .support.jsondoc import check_document, schema_for
from .support.layers import push_layers, tar_layer

main = load_all()  # the group is lazy: these tests walk every command's options

ROOT = Path(__file__).resolve().parent.parent
CAP = "build-dag[snowflake+airflow+dbt]@data-engineering"
#: Commands whose success is validated in the test that can afford it (the run takes minutes here).
SUCCESS_ELSEWHERE = {
    "env build": "tests/envimage/test_envimage.py (builds a Debian image from packages)",
    "exam verify": "tests/exams/test_exam_certification_push.py (certifies a whole suite: ~40 s)",
    "exam import": "tests/exams/test_exam_import.py (builds git repositories with history)",
    "exam grade": "tests/exams/test_exam_grade.py (imports exams from git repositories, grades in the sandbox)",
    "transcripts export": "tests/sandbox/test_model_replay.py (needs a run of an agent that calls a model)",
    "log verify": "tests/verifier/test_translog.py (a published transparency log)",
    "log watch": "tests/verifier/test_translog.py (a published transparency log)",
    "log export": "tests/verifier/test_translog.py (a published transparency log)",
    "state rebuild": "tests/verifier/test_state_rebuild.py (a registry, a published log and attests to rebuild from)",
    "exam harvest": "tests/exams/test_exam_harvest.py (git histories imported and certified in the sandbox)",
    "exam candidates": "tests/exams/test_exam_harvest.py (git repositories with a history of each kind)",
}


def json_commands(group: click.Group = main, prefix: str = "") -> list[str]:
    """Every command (by its full name) that takes ``--json``."""
    found = []
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            found += json_commands(cmd, f"{prefix}{name} ")
        elif any("--json" in p.opts for p in cmd.params):
            found.append(prefix + name)
    return found


def run_json(command: str, *args: Any, code: int = 0) -> dict[str, Any]:
    """``acx-oci COMMAND ARGS --json``, expecting exit ``code``; the checked document."""
    res = cli(*command.split(), *args, "--json")
    assert res.exit_code == code, f"{command}: exit {res.exit_code}\n{res.stdout}\n{res.stderr}"
    return check_document(command, res.stdout, res.exit_code)


@dataclass
class World:
    tmp: Path
    registry: str
    ref: str
    bench: str
    trust: Path
    verifier_did: str
    docs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def key(self, name: str) -> str:
        return str(self.tmp / f"{name}.key")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, registry: str) -> World:
    """Keys, the demo cartridge and benchmark pushed, one attest run: each step a --json command checked here."""
    tmp = tmp_path_factory.mktemp("json-output")
    docs = {"keygen": run_json("keygen", tmp / "publisher")}
    verifier_did = run_json("keygen", tmp / "verifier", "--did", "did:web:verifier.acx.example")["did"]
    assert cli("cartridge", "init", tmp / "agent", "--id", "io.example/json-agent", "--version", "1.0.0",
               "--capability", CAP).exit_code == 0
    ref = f"{registry}/acx/json-agent:1.0.0"
    docs["cartridge push"] = run_json("cartridge push", tmp / "agent", ref, "--key", tmp / "publisher.key")
    docs["benchmark demo"] = run_json("benchmark demo", tmp / "bench")
    bench = f"{registry}/acx/json-bench:2026.07.1"
    pushed = run_json("benchmark push", tmp / "bench", bench, "--seal-to", tmp / "verifier.did.json")
    docs["benchmark push"] = pushed
    publisher_did = docs["keygen"]["did"]
    trust = tmp / "trust.yaml"
    trust.write_text(
        f"publishers:\n  - id: {publisher_did}\n"
        f"verifiers:\n  - id: {verifier_did}\n    didDocument: verifier.did.json\n"
        f"benchmarks:\n  - id: acx-bench-dag-de\n    version: '2026.07.1'\n"
        f"    digest: {pushed['benchmarkDigest']}\n    heldOutSliceDigest: {pushed['heldOutSliceDigest']}\n"
        "solvers: [rom, reference]\n")
    docs["attest"] = run_json("attest", ref, "--benchmark", bench, "--key", tmp / "verifier.key", "--issuer",
                              verifier_did, "--competence", "33", "--state", tmp / "state", "-o", tmp / "att")
    assert docs["attest"]["issued"] is True
    return World(tmp, registry, ref, bench, tmp / "trust.yaml", verifier_did, docs)


def _layout(w: World) -> str:
    base = [("etc", "dir", None), ("etc/passwd", "file", b"root:x:0:0::/:/bin/sh\n")]
    return push_layers(w.tmp / "env-layout", "img", [tar_layer(base)])


def _certified(w: World) -> Path:
    """One exam of exams-good certified into w.tmp/certs (once: the whole suite takes ~40 s here)."""
    out = w.tmp / "certs"
    if "exam certify" not in w.docs:
        shutil.copytree(ROOT / "testdata" / "exams-good", w.tmp / "suite")
        w.docs["exam certify"] = run_json("exam certify", w.tmp / "suite" / "tasks" / "fx-0001", "--out", out)
    return out


def _signed_card(w: World) -> Path:
    site = w.tmp / "site"
    if not site.exists():
        run_json("agent-card show", w.ref, "--trust", w.trust, "--sign", w.key("publisher"), "--out", site)
    return site / ".well-known" / "agent-card.json"


def _status_list(w: World) -> Path:
    out = w.tmp / "list.json"
    if not out.exists():
        run_json("status-list create", out, "--key", w.key("verifier"), "--id", "https://verifier.example/s/")
    return out


def _policy(w: World, text: str) -> Path:
    p = w.tmp / f"policy-{abs(hash(text))}.yaml"
    p.write_text(text)
    return p


UNMET = "build-dag>=junior@model=acme-absent-2026-06"  # the demo's level was earned with no model
ALLOW = "apiVersion: acx.dev/policy/v1\ndefault: allow\nrules: []\n"
DENY = ("apiVersion: acx.dev/policy/v1\nrules:\n  - repositories: ['acx/*']\n    require:\n      capabilities:\n"
        "        - taskType: write-docs\n          minTier: senior\n")

Case = Callable[[World], dict[str, Any]]

SUCCESS: dict[str, Case] = {
    "keygen": lambda w: w.docs["keygen"],
    "cartridge push": lambda w: w.docs["cartridge push"],
    "benchmark demo": lambda w: w.docs["benchmark demo"],
    "benchmark push": lambda w: w.docs["benchmark push"],
    "attest": lambda w: w.docs["attest"],
    "inspect": lambda w: run_json("inspect", w.ref),
    "discover": lambda w: run_json("discover", w.ref),
    "resolve": lambda w: run_json("resolve", w.ref, "--trust", w.trust),
    "pull": lambda w: run_json("pull", w.ref, "-o", w.tmp / "pulled", "--trust", w.trust),
    "agent-card show": lambda w: run_json("agent-card show", w.ref, "--trust", w.trust),
    "agent-card verify": lambda w: run_json("agent-card verify", _signed_card(w)),
    "policy check": lambda w: run_json("policy check", w.ref, "--policy", _policy(w, ALLOW), "--trust", w.trust),
    "copy": lambda w: run_json("copy", w.ref, f"oci:{w.tmp / 'copied'}:1.0.0", "-q"),
    "referrers repair": lambda w: run_json("referrers repair", w.ref),
    "doctor": lambda w: run_json("doctor", w.registry, "--no-size-probe"),
    "benchmark inspect": lambda w: run_json("benchmark inspect", w.bench),
    "benchmark unseal": lambda w: run_json("benchmark unseal", w.bench, "--key", w.key("verifier"),
                                           "--output", w.tmp / "held-out.json"),
    "benchmark exposures": lambda w: run_json("benchmark exposures", "--state", w.tmp / "state"),
    "vc verify": lambda w: run_json("vc verify", w.tmp / "att" / "credential.json", "--trust", w.trust,
                                    "--status-list", w.tmp / "att" / "status-list.json"),
    "status-list create": lambda w: run_json("status-list create", w.tmp / "list2.json", "--key",
                                             w.key("verifier"), "--id", "https://verifier.example/s/2"),
    "status-list check": lambda w: run_json("status-list check", _status_list(w), "7"),
    "status-list revoke": lambda w: run_json("status-list revoke", _status_list(w), "9", "--key", w.key("verifier")),
    "status-refresh": lambda w: run_json("status-refresh", "--key", w.key("verifier"), "--state", w.tmp / "state"),
    "revoke": lambda w: run_json("revoke", w.docs["attest"]["attestationDigest"], "--key", w.key("verifier"),
                                 "--state", w.tmp / "state"),
    "env pull": lambda w: run_json("env pull", _layout(w), "--cache-dir", w.tmp / "cache"),
    "env prune": lambda w: run_json("env prune", "--cache-dir", w.tmp / "cache", "--max-size", "0"),
    "sandbox check": lambda w: run_json("sandbox check", "--key", w.key("verifier")),
    "exam certify": lambda w: (_certified(w), w.docs["exam certify"])[1],
    "exam report": lambda w: run_json("exam report", "--records", _certified(w), "--runs", w.tmp / "att"),
    "exam canary scan": lambda w: run_json("exam canary scan", _certified(w) / "canaries.json",
                                           "--registry", _certified(w) / "canaries.json"),
}


def _absent(w: World) -> str:
    return f"{w.registry}/acx/absent:1.0.0"


def _file(w: World, name: str, text: str) -> Path:
    p = w.tmp / name
    p.write_text(text)
    return p


FAILURE: dict[str, Callable[[World], tuple[list[Any], int]]] = {
    "keygen": lambda w: ([_file(w, "k-file", "x") / "k"], 2),
    "cartridge push": lambda w: ([w.tmp / "agent", f"{w.registry}/acx/x:1", "--key", w.tmp / "missing.key"], 2),
    "benchmark demo": lambda w: ([_file(w, "a-file", "x")], 2),
    "benchmark push": lambda w: ([w.tmp / "agent", f"{w.registry}/acx/b:1", "--seal-to",
                                  w.tmp / "verifier.did.json"], 2),
    "attest": lambda w: ([_absent(w), "--benchmark", w.bench, "--key", w.key("verifier"), "--issuer",
                          w.verifier_did, "--state", w.tmp / "state-x", "-o", w.tmp / "att-x"], 2),
    "inspect": lambda w: ([_absent(w)], 2),
    "discover": lambda w: ([_absent(w)], 2),
    "resolve": lambda w: ([w.ref, "--trust", w.trust, "--require", UNMET], 1),
    "pull": lambda w: ([_absent(w), "-o", w.tmp / "pulled-x"], 2),
    "agent-card show": lambda w: ([_absent(w), "--trust", w.trust], 2),
    "agent-card verify": lambda w: ([_file(w, "card.json", "{}")], 1),
    "policy check": lambda w: ([w.ref, "--policy", _policy(w, DENY), "--trust", w.trust], 1),
    "copy": lambda w: ([_absent(w), f"oci:{w.tmp / 'copied-x'}:1", "-q"], 2),
    "referrers repair": lambda w: ([_absent(w)], 2),
    "doctor": lambda w: (["127.0.0.1:1", "--timeout", "1"], 3),
    "benchmark inspect": lambda w: ([_absent(w)], 2),
    "benchmark unseal": lambda w: ([w.bench, "--key", w.key("publisher"), "--output", w.tmp / "h.json"], 1),
    "benchmark exposures": lambda w: (["--state", _file(w, "state-file", "x")], 2),
    "vc verify": lambda w: ([_file(w, "vc.json", "{\"not\": \"a credential\"}")], 1),
    "status-list create": lambda w: ([_status_list(w), "--key", w.key("verifier"), "--id", "https://v.example/s/"], 2),
    "status-list check": lambda w: ([_status_list(w), "99999999"], 2),
    "status-list revoke": lambda w: ([w.tmp / "no-list.json", "1", "--key", w.key("verifier")], 2),
    "status-refresh": lambda w: (["--key", w.tmp / "missing.key", "--state", w.tmp / "state"], 2),
    "revoke": lambda w: (["sha256:" + "0" * 64, "--key", w.key("verifier"), "--state", w.tmp / "state"], 2),
    "state rebuild": lambda w: (["--key", w.key("verifier"), "--state", w.tmp / "rebuilt-x"], 2),
    "env build": lambda w: (["not a reference!"], 2),
    "env pull": lambda w: ([f"oci:{w.tmp / 'no-layout'}:img", "--cache-dir", w.tmp / "cache"], 2),
    "env prune": lambda w: (["--max-size", "-1"], 2),
    "sandbox check": lambda w: (["--model", "openai-chat:x"], 2),
    "exam certify": lambda w: ([w.tmp / "agent"], 2),
    "exam report": lambda w: (["--records", w.tmp / "no-records"], 2),
    "exam import": lambda w: (["--swebench", _file(w, "instances.jsonl", "{}\n"), "--repos", w.tmp,
                               "-o", w.tmp / "imported"], 2),
    "exam verify": lambda w: ([w.bench], 1),
    "exam grade": lambda w: ([w.tmp / "agent", "--predictions", _file(w, "preds.jsonl", "[]\n")], 2),
    "exam canary scan": lambda w: ([w.trust, "--registry", _certified(w) / "canaries.json"], 1),
    "exam candidates": lambda w: (["--repo", w.tmp], 2),
    "exam harvest": lambda w: (["--repo", w.tmp, "-o", w.tmp / "h-suite", "--out", w.tmp / "h-certs",
                                "--classification", "public"], 2),
    "log verify": lambda w: ([f"oci:{w.tmp / 'no-log'}"], 2),
    "log watch": lambda w: ([f"oci:{w.tmp / 'no-log'}", "--cartridge", "io.example/x"], 2),
    "log export": lambda w: ([f"oci:{w.tmp / 'no-log'}", w.tmp / "log-out"], 2),
    "transcripts export": lambda w: ([w.tmp / "agent", "--key", w.key("verifier"), "--to",
                                      w.tmp / "verifier.did.json", "-o", w.tmp / "export"], 2),
}


def test_every_json_command_has_a_schema_a_success_and_a_failure() -> None:
    commands = set(json_commands())
    assert len(commands) >= 30
    assert commands == set(FAILURE), commands ^ set(FAILURE)
    assert commands == set(SUCCESS) | set(SUCCESS_ELSEWHERE), commands ^ (set(SUCCESS) | set(SUCCESS_ELSEWHERE))
    for command in commands:
        schema = schema_for(command)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert {"$ref": "envelope.schema.json"} in schema["allOf"], command
        assert schema["$id"].endswith(f"/{command.replace(' ', '-')}.schema.json"), command


def test_the_envelope_schema_refuses_what_it_should() -> None:
    """ok and exitCode must agree, a success carries no code, a code needs its message."""
    check = jsonschema.Draft202012Validator(schema_for("envelope")).is_valid
    assert check({"schemaVersion": 1, "ok": True, "exitCode": 0})
    assert check({"schemaVersion": 1, "ok": False, "exitCode": 3, "code": "fetch_failed", "message": "unreachable"})
    assert not check({"schemaVersion": 1, "ok": True, "exitCode": 1})
    assert not check({"schemaVersion": 1, "ok": False, "exitCode": 0})
    assert not check({"schemaVersion": 1, "ok": True, "exitCode": 0, "code": "fetch_failed", "message": "x"})
    assert not check({"schemaVersion": 1, "ok": False, "exitCode": 2, "code": "bad_input"})
    assert not check({"ok": True, "exitCode": 0})


def test_a_verdict_keeps_its_result_fields(world: World) -> None:
    """resolve with an unmet --require: exit 1, ok false, and the resolution beside the envelope."""
    doc = run_json("resolve", world.ref, "--trust", world.trust, "--require", UNMET, code=1)
    assert doc["requirements"]["unmet"] and doc["capabilities"][0]["effective"] == "VERIFIED"
    assert doc["manifestDigest"] == world.docs["cartridge push"]["manifestDigest"]


def test_human_output_names_a_simulated_level_and_says_replayed_only_when_it_replayed(world: World) -> None:
    """The demo cartridge has no runtime: its level was played by the reference solver. Nothing says VERIFIED."""
    w = world
    human = cli("resolve", w.ref, "--trust", w.trust)
    assert human.exit_code == 0, human.output
    assert "SIMULATED tier=" in human.stdout and "VERIFIED" not in human.stdout, human.stdout
    assert "played by: the reference solver (a simulation)" in human.stdout
    assert "replayed: every deciding credential" in human.stdout  # its game records were re-rated
    pulled = cli("pull", w.ref, "-o", w.tmp / "pulled-human", "--trust", w.trust)
    assert "SIMULATED tier=" in pulled.stdout and "VERIFIED" not in pulled.stdout, pulled.stdout
    copied = cli("copy", w.ref, f"oci:{w.tmp / 'copied-human'}:1.0.0", "--trust", w.trust, "-q")
    assert copied.exit_code == 0 and "0/1 claims VERIFIED, 1 SIMULATED" in copied.stdout, copied.output
    # a cartridge nothing attests: no deciding credential, so nothing was replayed and no line says so
    bare = f"{w.registry}/acx/json-bare:1.0.0"
    run_json("cartridge push", w.tmp / "agent", bare, "--key", w.key("publisher"))
    unproven = cli("resolve", bare, "--trust", w.trust)
    assert unproven.exit_code == 0 and "NOT VERIFIED" in unproven.stdout, unproven.output
    assert "replayed" not in unproven.stdout, unproven.stdout


@pytest.mark.parametrize("command", list(SUCCESS))
def test_success_is_one_valid_document(world: World, command: str) -> None:
    doc = SUCCESS[command](world)
    assert doc["ok"] is True and doc["exitCode"] == 0 and "code" not in doc


@pytest.mark.parametrize("command", list(FAILURE))
def test_failure_is_one_valid_document(world: World, command: str) -> None:
    args, code = FAILURE[command](world)
    doc = run_json(command, *args, code=code)
    assert doc["ok"] is False
    if code != 1:  # an exception: its reason code and one-line message; a verdict (exit 1) may have neither
        assert doc["code"] in reasons.REASONS and doc["message"], doc


def test_a_usage_error_with_json_is_a_document_too(world: World) -> None:
    res = cli("resolve", world.ref, "--json")  # --trust is required: click refuses before the command runs
    doc = check_document("resolve", res.stdout, res.exit_code)
    assert res.exit_code == 2 and doc["code"] == reasons.BAD_INPUT and "--trust" in doc["message"]
