"""``acx-oci attest`` end to end: refusals, the sigma gate, reproducibility, records, cooldown, ledger."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from acx_oci.evaluation.checks import VerifyContext
from acx_oci.evaluation.verify import verify_level_credential
from acx_oci.model import gamerecords
from acx_oci.oci import open_store
from acx_oci.services.verifier.ledger import Ledger
from acx_oci.trust import load_identity

from ..support.attest_world import World, build_attest_world
from ..support.cli import cli, ok

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, registry: str) -> World:
    return build_attest_world(tmp_path_factory.mktemp("attest"), registry)


def attest(w: World, out: str, *extra: str, verifier: Path | None = None, issuer: str | None = None,
           state: str = "state", cart: str | None = None, code: int | None = None) -> tuple[int, dict[str, Any]]:
    res = cli("attest", cart or w.cart, "--benchmark", w.bench, "--key", f"{verifier or w.verifier}.key",
              "--issuer", issuer or w.verifier_did, "--state", str(w.tmp / state), "-o", str(w.tmp / out),
              "--json", *extra)
    if code is not None:
        assert res.exit_code == code, res.output
    return res.exit_code, json.loads(res.output)


def records(out: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted((out / "games").glob("game-*.dsse.json"))]


def test_weak_agent_not_issued_then_cooldown(world: World) -> None:
    code, weak = attest(world, "weak", "--solver", "reference", "--competence", "14", "--games", "50",
                        state="state-weak")
    assert code == 1 and weak["issued"] is False
    assert weak["games"] == 50 and weak["sigma"] >= 1.5
    assert any("sigma" in r and "sigmaMax 1.5" in r for r in weak["reasons"])
    assert weak["credential"] is None and not (world.tmp / "weak" / "credential.json").exists()
    assert len(records(world.tmp / "weak")) == 50
    # Resubmitting at once is refused, though the first attempt issued nothing.
    code, again = attest(world, "weak2", "--competence", "14", "--games", "50", state="state-weak")
    assert code == 2 and again["issued"] is False and "cooldown" in again["reasons"][0]
    with Ledger(world.tmp / "state-weak") as led:
        attempts = led.attempts()
    assert [a.state for a in attempts] == ["not-issued", "refused"]
    first = attempts[0]
    assert first.rom_digest == weak["romDigest"] and first.cartridge_manifest_digest.startswith("sha256:")
    assert first.benchmark_id == "acx-bench-dag-de" and first.reasons == weak["reasons"]
    assert first.games == 50 and first.finished_at is not None
    # --cooldown 0 disables it.
    code, _ = attest(world, "weak3", "--competence", "14", "--games", "50", "--cooldown", "0", state="state-weak")
    assert code == 1


def test_strong_agent_issued_verifiable_and_replayable(world: World) -> None:
    code, strong = attest(world, "strong", "--competence", "33", state="state-strong")
    assert code == 0, strong
    assert strong["issued"] and strong["reasons"] == []
    assert strong["games"] == 90 and abs(strong["mu"] - 33) < 4 and strong["sigma"] < 1.5
    assert strong["careerTier"] in ("principal", "distinguished")
    assert strong["R"] == pytest.approx(strong["mu"] - 3 * strong["sigma"])
    out = world.tmp / "strong"
    cred = json.loads((out / "credential.json").read_text())
    status_list = json.loads((out / "status-list.json").read_text())
    assert strong["credential"] == str(out / "credential.json")
    res = cred["credentialSubject"]["result"][0]
    assert res["acx:cartridgeRomDigest"] == strong["romDigest"] and res["acx:gamesPlayed"] == 90

    # Every game record verifies with the verifier's key; replay reproduces the credential's rating.
    ident = load_identity(f"{world.verifier}.key")
    raws = records(out)
    assert len(raws) == 90
    preds = [gamerecords.verify_game(raw, [ident.public_bytes]) for raw in raws]
    replayed = gamerecords.rerate(preds)
    assert (replayed.mu, replayed.sigma) == (res["acx:ratingMu"], res["acx:ratingSigma"])
    digests = {e["acx:digestMultibase"] for e in cred["evidence"]}
    assert digests == {"sha256:" + hashlib.sha256(r).hexdigest() for r in raws}
    # The unsealed held-out slice is not in any published output; transcripts: none for the reference solver.
    ok(cli("benchmark", "unseal", world.bench, "--key", f"{world.verifier}.key", "-o", str(world.tmp / "held.json")))
    held = json.loads((world.tmp / "held.json").read_text())
    published = (out / "credential.json").read_bytes() + b"".join(raws) + (out / "status-list.json").read_bytes()
    assert not any(t["id"].encode() in published for t in held["tasks"])

    # The trust core's verifier accepts it, with the list the credential points to.
    from acx_oci.trust import AcceptedBenchmark, Party, Trust

    trust = Trust(publishers=[Party(world.publisher_did)],
                  verifiers=[Party(world.verifier_did, ident.did_document())],
                  benchmarks=[AcceptedBenchmark("acx-bench-dag-de", "2026.07.1", res["acx:benchmarkDigest"],
                                                res["acx:heldOutSliceDigest"])],
                  solvers=("rom", "reference"))
    result = verify_level_credential(cred, VerifyContext(
        trust=trust, now=datetime.now(UTC), expected_rom_digest=strong["romDigest"], status_list=status_list,
        cartridge_controller=world.publisher_did, rom_signer=world.publisher_did,
        evidence={"sha256:" + hashlib.sha256(r).hexdigest(): r for r in raws}))
    assert result.verified, result.codes

    with Ledger(world.tmp / "state-strong") as led:
        (attempt,) = led.attempts()
        assert attempt.state == "issued" and attempt.credential_id == cred["id"]
        sl = led.status_list(attempt.started_at, "https://unused.example", issuer=attempt.issuer)
        assert cred["credentialStatus"]["statusListCredential"] == sl.url and sl.url.endswith(sl.uuid)
        locations = [p["location"] for p in led.publications(sl.uuid)]
        assert any(loc.endswith("status-list.json") for loc in locations)  # the -o file
        assert any(loc.endswith(f":acx-status-{sl.uuid}") for loc in locations)  # the cartridge's repository


def test_two_runs_and_two_verifiers_play_the_same_games(world: World) -> None:
    runs = []
    for out, verifier, issuer in (("same-a", world.verifier, world.verifier_did),
                                  ("same-b", world.verifier, world.verifier_did),
                                  ("same-c", world.verifier2, world.verifier2_did)):
        code, summary = attest(world, out, "--competence", "33", "--cooldown", "0", verifier=verifier,
                               issuer=issuer, state=f"state-{out}")
        assert code == 0, summary
        runs.append((summary, records(world.tmp / out)))
    keys = [load_identity(f"{world.verifier}.key").public_bytes, load_identity(f"{world.verifier2}.key").public_bytes]
    preds = [[gamerecords.verify_game(raw, keys) for raw in raws] for _, raws in runs]
    assert preds[0] == preds[1] == preds[2]  # same games, same order, same ratings
    assert len({(s["mu"], s["sigma"], s["acxLevel"]) for s, _ in runs}) == 1
    assert runs[0][1] == runs[1][1] and runs[0][1] != runs[2][1]  # only the signatures differ


def test_refusals_before_running(world: World) -> None:
    # The publisher cannot grade its own cartridge.
    code, res = attest(world, "self", "--competence", "33", verifier=world.tmp / "publisher",
                       issuer=world.publisher_did, state="state-refusals")
    assert code == 2 and "independence" in res["reasons"][0]
    # A cartridge that does not claim the benchmark's capability.
    ok(cli("cartridge", "init", str(world.tmp / "other"), "--id", "io.example/other", "--version", "1.0.0",
           "--capability", "write-docs[python]"))
    other = ok(cli("cartridge", "push", str(world.tmp / "other"), f"oci:{world.tmp / 'layout'}:other", "--key",
                   str(world.tmp / "publisher.key"), "--json"))
    code, res = attest(world, "nocap", "--competence", "33", state="state-refusals",
                       cart=other["reference"].split("@")[0])
    assert code == 2 and "does not claim" in res["reasons"][0]
    # A verifier the slice was not sealed to.
    ok(cli("keygen", str(world.tmp / "stranger")))
    code, res = attest(world, "stranger", "--competence", "33", verifier=world.tmp / "stranger",
                       issuer=load_identity(f"{world.tmp / 'stranger'}.key").did, state="state-refusals")
    assert code == 2 and "not sealed to" in res["reasons"][0]
    with Ledger(world.tmp / "state-refusals") as led:
        assert [a.state for a in led.attempts()] == ["refused"] * 3
    # Bad --games is a usage error (exit 2) and starts no cooldown.
    res2 = cli("attest", world.cart, "--benchmark", world.bench, "--key", f"{world.verifier}.key", "--issuer",
               world.verifier_did, "--state", str(world.tmp / "state-games"), "-o", str(world.tmp / "g"),
               "--competence", "33", "--games", "97")
    assert res2.exit_code == 2 and "exceeds the 96 held-out" in res2.output


def test_nothing_that_signs_runs_a_typed_command(tmp_path: Path) -> None:
    """--agent-cmd is gone from attest: only the ROM's own runtime (or a labelled simulation) can issue."""
    res = cli("attest", "oci:x:y", "--benchmark", "oci:x:z", "--key", __file__, "--issuer", "did:key:z6Mk",
              "--agent-cmd", "true", "-o", str(tmp_path / "o"))
    assert res.exit_code == 2 and "--agent-cmd" in res.output


def test_attest_publishes_on_a_registry_with_the_referrers_api(tmp_path_factory: pytest.TempPathFactory,
                                                               ggcr: str) -> None:
    """On go-containerregistry's registry (Referrers API, no OCI-Subject header, config media type listed
    as artifactType): attest publishes through the API path and the attestation is discoverable by type."""
    w = build_attest_world(tmp_path_factory.mktemp("attest-ggcr"), ggcr)
    code, strong = attest(w, "strong", "--competence", "33", state="state-strong")
    assert code == 0 and strong["issued"], strong
    listed = ok(cli("discover", w.cart, "--json", "--artifact-type", "application/vnd.acx.level-attestation.v1"))
    # ggcr lists the config media type as artifactType: the credential and its cosign 3 bundle are classified
    assert listed["source"] == "api" and listed["classifiedByManifest"] == 2
    assert [r["digest"] for r in listed["referrers"]] == [strong["attestationDigest"]]
    assert listed["referrers"][0]["annotations"]["dev.acx.level.career-tier"] == strong["careerTier"]
    repo = w.cart.rsplit(":", 1)[0]
    tags = open_store(repo).list_tags()
    assert any(t.startswith("acx-status-") for t in tags)  # the status list went to the cartridge's repository
    # no tag-schema index was needed; the sha256-<hex>.sig/.att tags are the cosign projection, not an index
    assert not any(t.startswith("sha256-") and "." not in t for t in tags)
    assert {t.rsplit(".", 1)[-1] for t in tags if t.startswith("sha256-")} == {"sig", "att"}
