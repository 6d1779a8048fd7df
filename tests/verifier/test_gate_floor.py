"""The gate's floor (issue 44.2): nothing is signed with sigma >= 1.5 or fewer than 30 games.

The reference design: "A credential MUST NOT issue unless sigma < 1.5 and games >= 30". Before this, ``attest
--min-games 1 --sigma-max 100`` printed ISSUED and signed a credential off 5 games, and a trust file's loose
``gate:`` accepted it. Now lower flags are a *look*: played and shown; no credential, no attempt
counted, nothing pushed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acx_oci.errors import UsageError
from acx_oci.oci import open_store
from acx_oci.services.verifier.ledger import Ledger
from acx_oci.trust.trustfile import trust_from_dict

from ..support.attest_world import World, build_attest_world
from ..support.cli import cli


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, registry: str) -> World:
    return build_attest_world(tmp_path_factory.mktemp("floor"), registry)


def _attest(w: World, out: str, state: str, *extra: str) -> tuple[int, dict[str, Any]]:
    res = cli("attest", w.cart, "--benchmark", w.bench, "--key", f"{w.verifier}.key", "--issuer", w.verifier_did,
              "--state", str(w.tmp / state), "-o", str(w.tmp / out), "--solver", "reference", "--json", *extra)
    return res.exit_code, json.loads(res.output)


def _referrers(w: World) -> list[str]:
    with open_store(w.cart.rsplit(":", 1)[0]) as store:
        digest = store.resolve(w.cart.rsplit(":", 1)[1]).digest
        return sorted(d.digest for d in store.referrers(digest).descriptors)


def test_a_run_below_the_floor_signs_counts_and_pushes_nothing(world: World) -> None:
    """On the code before the floor this run was ISSUED (exit 0) with a credential signed off 5 games."""
    before = _referrers(world)
    code, doc = _attest(world, "look", "state-look", "--competence", "33", "--games", "5", "--min-games", "1",
                        "--sigma-max", "100")
    assert code == 1, doc
    assert doc["issued"] is False and doc["status"] == "not-issued" and doc["look"] is True
    assert doc["reasons"][0].startswith("below_floor: --sigma-max 100 is above the floor's 1.5"), doc["reasons"]
    assert "--min-games 1 is below the floor's 30 games" in doc["reasons"][0]
    assert doc["games"] == 5 and doc["credential"] is None and doc["attestationDigest"] is None
    out = world.tmp / "look"
    assert not (out / "credential.json").exists() and not (out / "attempt-record.json").exists()
    assert not (out / "status-list.json").exists()
    assert len(list((out / "games").glob("game-*.dsse.json"))) == 5  # what was played, kept for the verifier
    assert json.loads((out / "result.json").read_text())["look"] is True
    assert _referrers(world) == before  # no attestation, no attempt record, no status list
    with Ledger(world.tmp / "state-look") as led:
        assert led.attempts() == []  # no attempt counted, no cooldown started
    # so the run the verifier means comes at once, under the floor's gate
    code, real = _attest(world, "real", "state-look", "--competence", "33")
    assert code == 0 and real["issued"] is True and "look" not in real, real
    assert real["games"] >= 30 and real["sigma"] < 1.5


def test_a_tighter_gate_is_a_run_not_a_look(world: World) -> None:
    code, doc = _attest(world, "tight", "state-tight", "--competence", "33", "--sigma-max", "1.0")
    assert "look" not in doc and code == 1, doc  # 90 games cannot bring sigma under 1.0: NOT ISSUED, counted
    assert doc["reasons"][0].startswith("sigma_gate"), doc["reasons"]
    with Ledger(world.tmp / "state-tight") as led:
        assert [a.state for a in led.attempts()] == ["not-issued"]


def test_publishing_or_exporting_a_look_is_refused(world: World) -> None:
    _attest(world, "look2", "state-look2", "--competence", "33", "--games", "3", "--min-games", "1",
            "--sigma-max", "100")
    res = cli("attest", "--publish", str(world.tmp / "look2"), "--key", f"{world.verifier}.key",
              "--state", str(world.tmp / "state-look2"))
    assert res.exit_code == 2 and "a look below the gate's floor" in res.output, res.output
    # nor exported for a replay elsewhere: one lucky look replayed would launder the tries nobody saw
    res = cli("transcripts", "export", str(world.tmp / "look2"), "--key", f"{world.verifier}.key", "--to",
              f"{world.verifier}.did.json", "-o", str(world.tmp / "look2-export"))
    assert res.exit_code == 2 and "only a counted run is exported" in res.output, res.output


def test_a_sigma_max_that_is_no_number_is_a_look(world: World) -> None:
    code, doc = _attest(world, "nan", "state-nan", "--competence", "33", "--games", "3", "--sigma-max", "nan")
    assert code == 1 and doc.get("look") is True, doc
    assert doc["reasons"][0].startswith("below_floor: --sigma-max nan is above the floor's 1.5"), doc["reasons"]


@pytest.mark.parametrize(("gate", "said"), [({"sigmaMax": 100}, "gate.sigmaMax 100 is above the floor's 1.5"),
                                            ({"minGames": 1}, "gate.minGames 1 is below the floor's 30"),
                                            ({"sigmaMax": 1.6, "minGames": 29}, "gate.sigmaMax 1.6")])
def test_a_trust_file_may_tighten_the_gate_never_loosen_it(gate: dict[str, Any], said: str, tmp_path: Path) -> None:
    """Before: a trust file with ``gate: {sigmaMax: 100, minGames: 1}`` accepted a credential off one game."""
    with pytest.raises(UsageError) as err:
        trust_from_dict({"gate": gate}, tmp_path)
    assert said in str(err.value) and "never loosen it" in str(err.value)
    tight = trust_from_dict({"gate": {"sigmaMax": 1.2, "minGames": 40}}, tmp_path)
    assert (tight.sigma_max, tight.min_games) == (1.2, 40)


def test_a_loose_trust_file_is_one_line_at_the_cli(tmp_path: Path) -> None:
    trust = tmp_path / "trust.yaml"
    trust.write_text("gate: {sigmaMax: 3}\n")
    res = cli("resolve", "oci:/nonexistent:x", "--trust", str(trust))
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert "gate.sigmaMax 3 is above the floor's 1.5" in res.output
