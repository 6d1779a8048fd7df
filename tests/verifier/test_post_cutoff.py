"""Contamination in the consumer's hands: ``postCutoff`` in the trust file against ``acx:postCutoff``.

Real attests (the reference solver, an OCI layout) on the demo suite, whose tasks are dated in 2026, and on a
copy with every date removed; then ``resolve`` against a trust file that requires post-cutoff games.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from acx_oci import reasons
from acx_oci.evaluation import contamination
from acx_oci.model import LevelCredential
from acx_oci.model import benchmark as bmodel
from acx_oci.trust import PostCutoff

from ..support.attest_world import CAP
from ..support.cli import cli, ok


@dataclass
class PWorld:
    tmp: Path
    layout: str
    dated: dict[str, Any]
    undated: dict[str, Any]
    verifier_did: str = "did:web:verifier.example"


def _cart(w: PWorld, name: str, cutoff: str | None) -> str:
    extra = ["--runtime", "python3 /rom/agent.py", "--training-cutoff", cutoff] if cutoff else []
    ok(cli("cartridge", "init", str(w.tmp / name), "--id", f"io.example/{name}", "--version", "1.0.0",
           "--capability", CAP, *extra))
    ok(cli("cartridge", "push", str(w.tmp / name), f"{w.layout}:{name}", "--key", str(w.tmp / "publisher.key")))
    return f"{w.layout}:{name}"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> PWorld:
    tmp = tmp_path_factory.mktemp("postcutoff")
    ok(cli("keygen", str(tmp / "publisher")))
    ok(cli("keygen", str(tmp / "verifier"), "--did", "did:web:verifier.example"))
    layout = f"oci:{tmp / 'layout'}"
    ok(cli("benchmark", "demo", str(tmp / "dated")))
    (tmp / "undated").mkdir()
    doc = json.loads((tmp / "dated" / "benchmark.json").read_text())
    doc["version"] = "2026.07.2"
    for task in doc["tasks"]:
        del task["publishedAt"]
    (tmp / "undated" / "benchmark.json").write_text(json.dumps(doc))
    (tmp / "undated" / "seal.key").write_bytes((tmp / "dated" / "seal.key").read_bytes())
    pushed = {name: ok(cli("benchmark", "push", str(tmp / name), f"{layout}:{name}", "--seal-to",
                           str(tmp / "verifier.did.json"), "--json")) for name in ("dated", "undated")}
    return PWorld(tmp, layout, pushed["dated"], pushed["undated"])


def _trust(w: PWorld, min_share: float | None = None) -> Path:
    publisher = json.loads((w.tmp / "publisher.did.json").read_text())["id"]
    rule = "{required: true" + (f", minShare: {min_share}" if min_share is not None else "") + "}"
    path = w.tmp / f"trust-{min_share}.yaml"
    benches = "".join(f"  - id: acx-bench-dag-de\n    version: '{b['version']}'\n    digest: {b['benchmarkDigest']}\n"
                      f"    postCutoff: {rule}\n" for b in (w.dated, w.undated))
    path.write_text(f"publishers:\n  - id: {publisher}\nverifiers:\n  - id: {w.verifier_did}\n"
                    f"    didDocument: verifier.did.json\nbenchmarks:\n{benches}solvers: [rom, reference]\n")
    return path


def _attest(w: PWorld, cart: str, bench: str, out: str) -> dict[str, Any]:
    res = ok(cli("attest", cart, "--benchmark", f"{w.layout}:{bench}", "--key", str(w.tmp / "verifier.key"),
                 "--issuer", w.verifier_did, "--state", str(w.tmp / "state"), "-o", str(w.tmp / "runs" / out),
                 "--cooldown", "0", "--competence", "33", "--json"))
    assert res["issued"] is True, res
    cred = json.loads((w.tmp / "runs" / out / "credential.json").read_text())
    return dict(cred["credentialSubject"]["result"][0])


def _resolve(w: PWorld, cart: str, trust: Path) -> dict[str, Any]:
    res = cli("resolve", cart, "--trust", str(trust), "--json")
    out = json.loads(res.output)
    (w.tmp / "last-resolve.json").write_text(res.output)
    return dict(out)


def _codes(resolution: dict[str, Any]) -> list[str]:
    return [code for cap in resolution["capabilities"] for rej in cap.get("rejected", []) for code in rej["codes"]]


def test_dated_exams_after_the_cutoff_are_counted_and_verified(world: PWorld) -> None:
    cart = _cart(world, "late", "2025-12-31")
    res = _attest(world, cart, "dated", "late")
    pc = res["acx:postCutoff"]
    assert pc == {"cutoff": "2025-12-31", "source": "rom", "qualifying": res["acx:gamesPlayed"],
                  "drawn": res["acx:gamesPlayed"]} and pc["drawn"] >= 30
    resolution = _resolve(world, cart, _trust(world))
    assert resolution["capabilities"][0]["effective"] == "VERIFIED", resolution


def test_a_rom_without_a_cutoff_is_contamination_unproven(world: PWorld) -> None:
    cart = _cart(world, "nocut", None)
    res = _attest(world, cart, "dated", "nocut")  # without a requirement nothing changes: every task drawn
    assert res["acx:postCutoff"] == {"cutoff": None, "source": None, "qualifying": 0, "drawn": res["acx:gamesPlayed"]}
    resolution = _resolve(world, cart, _trust(world, 0.8))
    assert resolution["capabilities"][0]["effective"] != "VERIFIED"
    assert reasons.CONTAMINATION_UNPROVEN in _codes(resolution), resolution


def test_undated_exams_never_enter_the_slice_once_a_cutoff_is_known(world: PWorld) -> None:
    cart = _cart(world, "undated-cart", "2025-06-01")
    res = cli("attest", cart, "--benchmark", f"{world.layout}:undated", "--key", str(world.tmp / "verifier.key"),
              "--issuer", world.verifier_did, "--state", str(world.tmp / "state"), "-o",
              str(world.tmp / "runs" / "undated-run"), "--cooldown", "0", "--competence", "33", "--json")
    assert res.exit_code == 1, res.output  # issue 34: nothing undated is drawn, so nothing is left to play
    assert "insufficient_post_cutoff_exams: 0 held-out exams" in res.output


def test_a_slice_too_small_for_the_gate_without_a_cutoff_says_so_not_cutoff_none(world: PWorld) -> None:
    """Issue 37's walk: three imported exams, no cutoff, and the refusal read 'after the ROM's training cutoff None'."""
    cart = _cart(world, "small-slice", None)
    res = cli("attest", cart, "--benchmark", f"{world.layout}:dated", "--key", str(world.tmp / "verifier.key"),
              "--issuer", world.verifier_did, "--state", str(world.tmp / "state"), "-o",
              str(world.tmp / "runs" / "small-slice"), "--cooldown", "0", "--competence", "33", "--min-games", "500")
    assert res.exit_code == 1, res.output
    assert "None" not in res.output and "cutoff: every one may be drawn); the gate needs at least 500" in res.output
    assert res.output.startswith("NOT ISSUED (no game was played)\n  reason: insufficient_post_cutoff_exams")
    late = cli("attest", _cart(world, "late-slice", "2026-05-31"), "--benchmark", f"{world.layout}:dated", "--key",
               str(world.tmp / "verifier.key"), "--issuer", world.verifier_did, "--state", str(world.tmp / "state"),
               "-o", str(world.tmp / "runs" / "late-slice"), "--cooldown", "0", "--competence", "33")
    assert late.exit_code == 1, late.output
    assert "were published after the training cutoff 2026-05-31 (rom); the gate needs at least 30" in late.output


def _res(cutoff: str | None, qualifying: int, drawn: int) -> dict[str, Any]:
    return {"acx:postCutoff": {"cutoff": cutoff, "source": "rom", "qualifying": qualifying, "drawn": drawn}}


@pytest.mark.parametrize(("res", "rule", "passes"), [
    (_res("2025-01-01", 40, 40), PostCutoff(True), True),
    (_res("2025-01-01", 39, 40), PostCutoff(True), False),  # minShare defaults to every rated game
    (_res("2025-01-01", 32, 40), PostCutoff(True, 0.8), True),
    (_res("2025-01-01", 31, 40), PostCutoff(True, 0.8), False),
    (_res(None, 0, 40), PostCutoff(True, 0.0), False),  # no cutoff: nothing is proven post-cutoff
    ({}, PostCutoff(True, 0.5), False),  # a credential from before acx:postCutoff
    ({}, PostCutoff(False), True),  # not required: nothing changes
    ({}, None, True),
])
def test_the_share_rule(res: dict[str, Any], rule: PostCutoff | None, passes: bool) -> None:
    check = contamination.check(res, rule)
    assert check.ok is passes
    assert check.code == ("ok" if passes else reasons.CONTAMINATION_UNPROVEN)
    assert "\n" not in check.message


def test_an_undated_task_is_never_dated_after_a_cutoff() -> None:
    cutoff = date(2025, 6, 1)
    assert bmodel.dated_after({"publishedAt": "2025-06-02"}, cutoff)
    assert not bmodel.dated_after({"publishedAt": "2025-06-01"}, cutoff)
    assert not bmodel.dated_after({}, cutoff) and not bmodel.dated_after({"publishedAt": "2026-01-01"}, None)
    # issue 34: with a cutoff known, an undated task never enters the slice; without one, every task does
    assert bmodel.post_cutoff([{}, {"publishedAt": "2025-01-01"}, {"publishedAt": "2025-07-01"}], cutoff) == \
        [{"publishedAt": "2025-07-01"}]
    assert len(bmodel.post_cutoff([{}, {"publishedAt": "2025-01-01"}], None)) == 2


def test_every_demo_task_has_a_real_date() -> None:
    tasks = bmodel.demo_document()["tasks"]
    dates = [date.fromisoformat(t["publishedAt"]) for t in tasks]
    assert len(set(dates)) == len(tasks) and min(dates) == date(2026, 1, 1) and max(dates) < date(2026, 7, 1)


@pytest.mark.parametrize(("post", "rule", "allowed"), [
    ({"cutoff": "2025-12-31", "source": "models-file", "qualifying": 90, "drawn": 90}, {"required": True}, True),
    ({"cutoff": "2025-12-31", "source": "rom", "qualifying": 80, "drawn": 90}, {"required": True}, False),
    ({"cutoff": "2025-12-31", "source": "rom", "qualifying": 80, "drawn": 90}, {"required": True, "minShare": 0.8},
     True),
    ({"cutoff": None, "source": None, "qualifying": 0, "drawn": 90}, {"required": True, "minShare": 0.1}, False),
    (None, {"required": True}, False),
    (None, {"required": False}, True),
])
def test_a_policy_capability_can_require_post_cutoff_games(post: dict[str, Any] | None, rule: dict[str, Any],
                                                           allowed: bool) -> None:
    from dataclasses import replace

    from acx_oci.evaluation import evaluate

    from ..gateway.test_policy import CAPREQ, NOW, accepted, policy, resolution

    result: dict[str, Any] = {"acx:cartridgeRomDigest": "sha256:" + "0" * 64}
    if post is not None:
        result["acx:postCutoff"] = post
    acc = replace(accepted(), credential=LevelCredential.document({"credentialSubject": {"result": [result]}}))
    verdict = evaluate(policy({"capabilities": [{**CAPREQ, "postCutoff": rule}]}), "acx/agent", resolution([acc]), NOW)
    assert verdict.allowed is allowed
    if not allowed:
        assert verdict.requirements[0].codes == (reasons.CONTAMINATION_UNPROVEN,)
        assert "post-cutoff" in verdict.requirements[0].description
