"""The ROM's ``policy.verification.regression {heldInSuite, heldOutSuite, acceptIf}`` read and enforced by attest.

Reuses tests/verifier/test_regression.py's world (the demo suite in an OCI layout, v1 attested at competence 33).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from ..support.attest_world import CAP
from ..support.cli import cli, ok
from . import test_regression as tr
from .test_regression import RWorld, attest

world = tr.world  # the same module-scoped world fixture, under its name

BENCH = "acx-bench-dag-de@2026.07.1"


def _cart(w: RWorld, name: str, version: str, **regression: Any) -> str:
    d = w.tmp / name
    ok(cli("cartridge", "init", str(d), "--id", "io.example/dag-agent", "--version", version, "--capability", CAP))
    spec = yaml.safe_load((d / "cartridge.yaml").read_text())
    spec["policy"]["verification"]["regression"].update(regression)
    (d / "cartridge.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    ok(cli("cartridge", "push", str(d), f"oci:{w.tmp / 'carts'}:{name}", "--key", str(w.tmp / "publisher.key")))
    return f"oci:{w.tmp / 'carts'}:{name}"


def _run(w: RWorld, cart: str, out: str, competence: str) -> tuple[int, dict[str, Any]]:
    return attest(w, cart, f"run-{out}", "--competence", competence, "--baseline", w.v1, "--baseline-competence", "33")


def test_an_accept_if_violated_on_the_held_in_suite_only_names_it(world: RWorld) -> None:
    cart = _cart(world, "hi-only", "2.0.0",
                 acceptIf="heldIn.R >= baseline.heldIn.R + 6 and heldOut.R >= baseline.heldOut.R - 10")
    code, res = _run(world, cart, "hi-only", "33")
    assert code == 1 and res["issued"] is False, res
    (reason,) = [r for r in res["reasons"] if r.startswith("regression:")]
    assert f"false on the held-in suite {BENCH};" in reason and "held-out suite" not in reason, reason
    assert "heldIn.R >= baseline.heldIn.R + 6" in reason and reason.count("vs baseline") == 4


def test_an_accept_if_that_holds_is_issued_and_recorded(world: RWorld) -> None:
    cart = _cart(world, "noninf", "2.1.0", acceptIf="noninferior(2, 0.05)", heldOutSuite=BENCH)
    code, res = _run(world, cart, "noninf", "40")
    assert code == 0, res
    cred = json.loads((world.tmp / "run-noninf" / "credential.json").read_text())
    baseline = cred["credentialSubject"]["result"][0]["acx:baseline"]
    assert baseline["acceptIf"] == "noninferior(2, 0.05)" and baseline["heldInSuite"] == BENCH
    # The same rule refuses an agent that is clearly worse, on both suites.
    worse = _cart(world, "noninf-worse", "2.1.1", acceptIf="noninferior(2, 0.05)")
    code, res = _run(world, worse, "noninf-worse", "25")
    assert code == 1, res
    assert f"false on the held-in suite {BENCH}, held-out suite {BENCH};" in res["reasons"][0], res


def test_a_held_in_suite_from_another_benchmark_is_played(world: RWorld) -> None:
    doc = json.loads((world.tmp / "bench" / "benchmark.json").read_text())
    doc["id"] = "acx-bench-dag-heldin"
    (world.tmp / "heldin").mkdir()
    (world.tmp / "heldin" / "benchmark.json").write_text(json.dumps(doc))
    (world.tmp / "heldin" / "seal.key").write_text("22" * 32 + "\n")
    ref = f"oci:{world.tmp / 'heldin-layout'}:1"
    ok(cli("benchmark", "push", str(world.tmp / "heldin"), ref, "--seal-to", str(world.tmp / "verifier2.did.json")))
    cart = _cart(world, "other-in", "3.0.0", heldInSuite=ref)
    code, res = _run(world, cart, "other-in", "40")
    assert code == 0, res
    result = json.loads((world.tmp / "run-other-in" / "result.json").read_text())
    assert result["regression"]["acx:baseline"]["heldInSuite"] == "acx-bench-dag-heldin@2026.07.1"
    strict = _cart(world, "other-in-strict", "3.0.1", heldInSuite=ref,
                   acceptIf="heldIn.R >= baseline.heldIn.R + 20 and heldOut.R >= 0")
    code, res = _run(world, strict, "other-in-strict", "33")
    assert code == 1 and "false on the held-in suite acx-bench-dag-heldin@2026.07.1;" in res["reasons"][0], res


def test_a_held_out_suite_that_is_not_this_benchmark_is_refused_before_any_game(world: RWorld) -> None:
    cart = _cart(world, "wrong-out", "4.0.0", heldOutSuite="acx-bench-other@1")
    code, res = _run(world, cart, "wrong-out", "33")
    assert code == 2 and "heldOutSuite is acx-bench-other@1" in res["reasons"][0], res
    assert not (world.tmp / "run-wrong-out" / "games").exists()


def test_a_malformed_accept_if_is_one_line_before_any_game(world: RWorld) -> None:
    cart = _cart(world, "bad-rule", "4.1.0", acceptIf="heldIn.R >= baseline.heldIn.R and __import__('os')")
    code, res = _run(world, cart, "bad-rule", "33")
    assert code == 2, res
    (reason,) = res["reasons"]
    assert "acceptIf: column 35: unexpected character '_'" in reason and "\n" not in reason, reason
    assert not (world.tmp / "run-bad-rule" / "games").exists()


def test_the_cli_and_the_library_share_one_default_tolerance() -> None:
    from acx_oci.cli.attest_cmd import attest_command
    from acx_oci.services.verifier import regression as regr
    from acx_oci.services.verifier.request import BaselineOptions

    (option,) = [p for p in attest_command.params if p.name == "regression_tolerance"]
    assert option.default == BaselineOptions().tolerance == regr.DEFAULT_TOLERANCE == 3.0
