"""The verifier runs the signed ROM in a proven sandbox: ``attest --solver rom`` end to end on an OCI layout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from acx_oci.cli import main
from acx_oci.crypto import unseal
from acx_oci.evaluation.checks import VerifyContext
from acx_oci.evaluation.verify import verify_level_credential
from acx_oci.model.gamerecords import PER_RUN_FIELDS
from acx_oci.trust import load_identity
from acx_oci.trust.trustfile import trust_from_dict

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH_PY = ROOT / "testdata" / "bench-py"
AGENTS = ROOT / "testdata" / "agents"
CAP = "implement-feature[python+pytest]@software-engineering"

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian 'bubblewrap') not installed")


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def ok(res: Result, code: int = 0) -> Any:
    assert res.exit_code == code, res.output
    return json.loads(res.output) if res.output.lstrip().startswith("{") else res.output


def make_cartridge(tmp: Path, name: str, agent: Path, layout: str, runtime: str = "python3 /rom/skills/agent.py",
                   version: str = "1.0.0") -> dict[str, Any]:
    """A cartridge whose ROM holds ``agent`` at skills/agent.py and whose runtime runs it."""
    d = tmp / name
    ok(cli("cartridge", "init", str(d), "--id", f"io.example/{name}", "--version", version, "--capability", CAP,
           "--runtime", runtime))
    shutil.copy(agent, d / "skills" / "agent.py")
    return dict(ok(cli("cartridge", "push", str(d), f"{layout}:{name}", "--key", str(tmp / "publisher.key"),
                       "--json")))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("rom")
    ok(cli("keygen", str(tmp / "publisher")))
    ok(cli("keygen", str(tmp / "verifier")))
    layout = f"oci:{tmp / 'layout'}"
    honest = make_cartridge(tmp, "honest", AGENTS / "simple_agent.py", layout)
    ok(cli("benchmark", "push", str(BENCH_PY), f"{layout}:bench", "--seal-to", str(tmp / "verifier.did.json"),
           "--allow-uncertified"))  # certifying all 150 exams takes minutes: tests/test_real_agent_page.py does it
    return {"tmp": tmp, "layout": layout, "honest": honest, "did": load_identity(f"{tmp / 'verifier'}.key").did}


def attest(world: dict[str, Any], ref: str, out: str, *extra: str) -> Result:
    tmp = world["tmp"]
    return cli("attest", ref, "--benchmark", f"{world['layout']}:bench", "--key", f"{tmp / 'verifier'}.key",
               "--issuer", world["did"], "--state", str(tmp / f"state-{out}"), "-o", str(tmp / "runs" / out), "--json",
               *extra)


def records(out: Path) -> list[dict[str, Any]]:
    preds = []
    for p in sorted((out / "games").glob("*.dsse.json")):
        env = json.loads(p.read_bytes())
        import base64

        preds.append(json.loads(base64.b64decode(env["payload"]))["predicate"])
    return preds


HONEST_GAMES = 12


def test_honest_agent_runs_as_rom_in_proven_sandbox(world: dict[str, Any]) -> None:
    # 12 games (the draw is the verifier's secret): the honest agent passes about half of the exams, so "none
    # passed" by chance is ~0.02% (6 games made it ~2%: it happened once in CI)
    res = attest(world, f"{world['layout']}:honest", "honest", "--games", str(HONEST_GAMES), "--jobs", "2")
    summary = ok(res, 1)  # 12 games cannot pass the gate (minGames 30): NOT ISSUED, but every game was played
    out = world["tmp"] / "runs" / "honest"
    canaries = sum(bool(p.get("canary")) for p in records(out))  # impossible exams drawn: played, never rated
    assert summary["games"] == HONEST_GAMES - canaries and any("minGames" in r for r in summary["reasons"])
    result = json.loads((out / "result.json").read_text())
    assert result["run"]["solver"]["name"] == "rom"
    assert {g["outcome"] for g in result["gameRecords"]} <= {"certified-pass", "model-fail"}
    outcomes = [(g["outcome"], g["detail"]) for g in result["gameRecords"]]
    assert any(o == "certified-pass" for o, _ in outcomes), outcomes
    preds = records(out)
    assert len(preds) == HONEST_GAMES
    for pred in preds:
        assert pred["solver"]["name"] == "rom"
        assert pred["runtimeDigest"] == pred["solver"]["runtimeDigest"]
        assert pred["containment"]["proven"] is True and pred["containment"]["sandbox"] == "bubblewrap"
        assert set(pred["conditions"]) == {"containment", "grader", "harness", "integrity"}
        assert all(pred["conditions"].values())
        assert pred["transcriptDigest"].startswith("sha256:")
    # Transcripts are sealed: the task ids appear only inside them.
    ident = load_identity(f"{world['tmp'] / 'verifier'}.key")
    sealed = sorted((out / "transcripts").glob("*.sealed.json"))
    transcript = json.loads(unseal(json.loads(sealed[0].read_bytes()), ident, b"acx-oci/game-transcript/v1"))
    assert transcript["taskId"].startswith("py-") and transcript["runtimeDigest"] == preds[0]["runtimeDigest"]
    everything = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file() and "transcripts" not in p.parts)
    assert transcript["taskId"].encode() not in everything


def test_jobs_do_not_change_the_result(world: dict[str, Any]) -> None:
    one = ok(attest(world, f"{world['layout']}:honest", "jobs1", "--games", "5", "--jobs", "1"), 1)
    three = ok(attest(world, f"{world['layout']}:honest", "jobs3", "--games", "5", "--jobs", "3"), 1)
    for key in ("mu", "sigma", "acxLevel", "passRate", "games"):
        assert one[key] == three[key], key

    def stable(pred: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in pred.items() if k not in PER_RUN_FIELDS}

    assert [stable(p) for p in records(world["tmp"] / "runs" / "jobs1")] == \
        [stable(p) for p in records(world["tmp"] / "runs" / "jobs3")]


def test_no_bubblewrap_means_nothing_is_signed(world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    summary = ok(attest(world, f"{world['layout']}:honest", "nobwrap", "--games", "4"), 1)
    assert summary["issued"] is False and summary["reasons"][0].startswith("containment_unproven")
    out = world["tmp"] / "runs" / "nobwrap"
    assert not (out / "credential.json").exists()
    preds = records(out)
    assert preds and all(p["outcome"] == "withheld" and p["containment"]["proven"] is False for p in preds)


def test_a_rom_without_runtime_is_refused(world: dict[str, Any]) -> None:
    d = world["tmp"] / "noruntime"
    ok(cli("cartridge", "init", str(d), "--id", "io.example/noruntime", "--version", "1.0.0", "--capability", CAP))
    ok(cli("cartridge", "push", str(d), f"{world['layout']}:noruntime", "--key",
           str(world["tmp"] / "publisher.key")))
    summary = ok(attest(world, f"{world['layout']}:noruntime", "noruntime-out"), 2)
    assert any(r.startswith("runtime:") for r in summary["reasons"])


def test_one_byte_of_runtime_changes_the_rom(world: dict[str, Any]) -> None:
    tmp, layout = world["tmp"], world["layout"]
    a = make_cartridge(tmp, "rt-a", AGENTS / "simple_agent.py", layout, "python3 /rom/skills/agent.py")
    b = make_cartridge(tmp, "rt-b", AGENTS / "simple_agent.py", layout, "python3 /rom/skills/agent.py ")
    assert a["romDigest"] != b["romDigest"]
    c = make_cartridge(tmp, "rt-c", AGENTS / "simple_agent.py", layout, "python3  /rom/skills/agent.pY")
    assert len({a["romDigest"], b["romDigest"], c["romDigest"]}) == 3
    # A credential earned by ROM a (here a simulation on the DAG suite) does not verify for ROM c.
    ok(cli("benchmark", "demo", str(tmp / "dag")))
    ok(cli("benchmark", "push", str(tmp / "dag"), f"{layout}:dag", "--seal-to", str(tmp / "verifier.did.json")))
    d = tmp / "dag-agent"
    ok(cli("cartridge", "init", str(d), "--id", "io.example/dag-agent", "--version", "1.0.0", "--capability",
           "build-dag[snowflake+airflow+dbt]@data-engineering", "--runtime", "python3 /rom/skills/agent.py"))
    shutil.copy(AGENTS / "simple_agent.py", d / "skills" / "agent.py")
    pushed = ok(cli("cartridge", "push", str(d), f"{layout}:dag-agent", "--key", str(tmp / "publisher.key"),
                    "--json"))
    summary = ok(cli("attest", f"{layout}:dag-agent", "--benchmark", f"{layout}:dag", "--key",
                     f"{tmp / 'verifier'}.key", "--issuer", world["did"], "--competence", "33", "--state",
                     str(tmp / "state-sim"), "-o", str(tmp / "sim"), "--json"))
    assert summary["issued"] is True
    cred = json.loads((tmp / "sim" / "credential.json").read_text())
    res = cred["credentialSubject"]["result"][0]
    assert res["acx:solver"] == "reference" and res["acx:cartridgeRomDigest"] == pushed["romDigest"]
    from datetime import UTC, datetime

    trust = trust_from_dict({"verifiers": [{"id": world["did"]}], "solvers": ["rom", "reference"]}, tmp)
    good = verify_level_credential(cred, VerifyContext(trust, datetime.now(UTC),
                                                       expected_rom_digest=pushed["romDigest"],
                                                       allow_unknown_status=True))
    assert "rom_mismatch" not in good.codes
    bad = verify_level_credential(cred, VerifyContext(trust, datetime.now(UTC), expected_rom_digest=c["romDigest"],
                                                      allow_unknown_status=True))
    assert "rom_mismatch" in bad.codes
    # A consumer that did not opt into simulations does not count it at all.
    strict = trust_from_dict({"verifiers": [{"id": world["did"]}]}, tmp)
    assert "solver_not_accepted" in verify_level_credential(
        cred, VerifyContext(strict, datetime.now(UTC), allow_unknown_status=True)).codes


def test_honest_agent_earns_its_level_on_the_registry(registry: str, tmp_path: Path) -> None:
    """All 90 held-out bench-py games, played by the ROM on the real registry; resolve shows what played.

    Keys come from fixed seeds so the ROM digest, hence the draw order and the rating, is the same every run.
    88 rated games leave sigma near 1.1, under the default gate (1.5); this verifier and its consumer still run a
    gate of sigmaMax 2 to show that the gate is a parameter on both sides.
    """
    from acx_oci.crypto import identity_from_seed
    from acx_oci.trust import write_identity

    write_identity(tmp_path / "publisher", identity_from_seed(bytes([7]) * 32))
    write_identity(tmp_path / "verifier", identity_from_seed(bytes([8]) * 32))
    d = tmp_path / "agent"
    ok(cli("cartridge", "init", str(d), "--id", "io.example/py-agent", "--version", "1.0.0", "--capability", CAP,
           "--runtime", "python3 /rom/skills/agent.py"))
    shutil.copy(AGENTS / "simple_agent.py", d / "skills" / "agent.py")
    cart = f"{registry}/acme/py-agent:1.0.0"
    ok(cli("cartridge", "push", str(d), cart, "--key", str(tmp_path / "publisher.key")))
    bench = ok(cli("benchmark", "push", str(BENCH_PY), f"{registry}/acme/bench-py:2026.07.1", "--seal-to",
                   str(tmp_path / "verifier.did.json"), "--allow-uncertified", "--json"))
    did = load_identity(tmp_path / "verifier.key").did
    summary = ok(cli("attest", cart, "--benchmark", f"{registry}/acme/bench-py:2026.07.1", "--key",
                     str(tmp_path / "verifier.key"), "--issuer", did, "--state", str(tmp_path / "state"), "-o",
                     str(tmp_path / "att"), "--jobs", "2", "--json"))
    # What its skill earns: it solves about half of the held-out tasks. 90 are drawn; the two impossible exams
    # among them are cheating canaries, played (and failed) but never rated: 88 rated games.
    assert summary["issued"] is True and summary["games"] == 88 and 0.4 <= summary["passRate"] <= 0.7
    assert summary["careerTier"] in ("staff", "principal", "distinguished")
    # no training cutoff declared: recorded as null, and every held-out exam qualifies (was test_exam_run's own run)
    res = json.loads((tmp_path / "att" / "credential.json").read_text())["credentialSubject"]["result"][0]
    assert res["acx:trainingCutoff"] is None and res["acx:qualifyingExams"] == 88
    preds = records(tmp_path / "att")
    assert len(preds) == 90 and sum(bool(p.get("canary")) for p in preds) == 2
    assert all(p["outcome"] == "model-fail" for p in preds if p.get("canary"))
    for pred in preds:
        assert pred["solver"]["name"] == "rom" and pred["containment"]["proven"] is True
        assert pred["runtimeDigest"] == pred["solver"]["runtimeDigest"]
    (tmp_path / "trust.yaml").write_text(
        f"verifiers: [{{id: '{did}'}}]\n"
        f"benchmarks: [{{id: {bench['id']}, version: '{bench['version']}', digest: '{bench['benchmarkDigest']}'}}]\n")
    # the demo suite is not in exam form: by default (issue 34) a ROM-run level on it is not VERIFIED ...
    refused = ok(cli("resolve", cart, "--trust", str(tmp_path / "trust.yaml"), "--json"))["capabilities"][0]
    assert refused["effective"] != "VERIFIED" and "exams_uncertified" in refused["rejected"][0]["codes"]
    with (tmp_path / "trust.yaml").open("a") as f:  # ... until the consumer relaxes it, in one line
        f.write("uncertifiedExams: allow\n")
    resolved = ok(cli("resolve", cart, "--trust", str(tmp_path / "trust.yaml"), "--json"))
    cap = resolved["capabilities"][0]
    assert cap["effective"] == "VERIFIED" and cap["solver"] == "rom" and cap["acxLevel"] == summary["acxLevel"]
    assert any("uncertifiedExams: allow" in line for line in cap["relaxed"]), cap  # the relaxation decided it
    text = ok(cli("resolve", cart, "--trust", str(tmp_path / "trust.yaml")))
    assert "played by: the signed ROM, sandboxed" in text
    assert "relaxed: exams not certified" in text and "(uncertifiedExams: allow)" in text
