"""A failed publication is still an attempt: the registry dies after the games, ``attest --publish`` finishes it.

The registry is a real Distribution process of its own, SIGKILLed from the progress hook once the last game is
played (before the push) and restarted on the same port and storage.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import sha256_digest
from acx_oci.oci import StoreOptions, open_store, parse_reference
from acx_oci.services.artifacts import credential_layer
from acx_oci.services.verifier import AttestRequest, Issued, RegistryOptions, SandboxOptions, publish_folder
from acx_oci.services.verifier.attest import attest
from acx_oci.services.verifier.ledger import Ledger, Subject
from acx_oci.solvers import ReferenceSolver
from acx_oci.trust import load_identity

from ..support.attest_world import World, build_attest_world
from ..support.cli import cli
from ..support.registry import Registry, registry_binary, start_registry
from ..support.registry_restart import kill, restart


@pytest.fixture
def own_registry() -> Iterator[list[Registry]]:
    """A registry this test may kill; a list so the restarted process is the one stopped at the end."""
    if registry_binary() is None:
        pytest.skip("docker-registry not installed")
    regs = [start_registry()]
    try:
        yield regs
    finally:
        regs[-1].stop()


def _attempt(state: Path) -> tuple[bool, str | None, str, bool]:
    with Ledger(state) as led:
        (a,) = led.attempts()
        subject = Subject(a.cartridge_ref, a.cartridge_manifest_digest, a.rom_digest, a.benchmark_id,
                          a.benchmark_version, a.benchmark_digest, a.issuer, a.solver, a.cartridge_id, a.capability_id)
        refusal = led.cooldown_refusal(subject, datetime.now(UTC), timedelta(hours=24))
    return a.starts_cooldown, a.publication, a.state, refusal is not None


def test_registry_killed_after_the_games_then_publish(own_registry: list[Registry], tmp_path: Path) -> None:
    reg = own_registry[0]
    w: World = build_attest_world(tmp_path, reg.host)
    ident = load_identity(f"{w.verifier}.key", did=w.verifier_did)
    out, state = tmp_path / "out", tmp_path / "state"
    killed: list[str] = []

    def progress(done: int, total: int, text: str) -> None:
        if done == total and not text.startswith("uploaded") and not killed:
            kill(reg)  # every game is played; nothing is pushed yet
            killed.append(text)

    outcome = attest(AttestRequest(cartridge_ref=w.cart, benchmark_ref=w.bench,
                                   verifier=ident, solver=ReferenceSolver(33), out_dir=out, state_dir=state,
                                   sandbox=SandboxOptions(secret_paths=(Path(f"{w.verifier}.key"),)), progress=progress,
                                   registry=RegistryOptions(store_options=StoreOptions(timeout=3))))
    assert killed, "the progress hook never saw the last game"
    assert isinstance(outcome, Issued) and outcome.exit_code == 3
    assert outcome.attestation_digest is None and outcome.publication_error
    assert "attest --publish" in outcome.publication_error and str(out) in outcome.publication_error
    credential_bytes = (out / "credential.json").read_bytes()
    # An attempt all the same: its cooldown runs; the ledger says the result is waiting to be pushed.
    assert _attempt(state) == (True, "pending", "issued", True)
    assert "counts all the same" in outcome.publication_error

    own_registry.append(restart(reg))
    res = cli("attest", "--publish", out, "--key", f"{w.verifier}.key", "--state", state, "--json")
    assert res.exit_code == 0, res.output
    first = json.loads(res.output)
    assert first["credentialDigest"] == sha256_digest(credential_bytes)
    # The attestation is there, a referrer of the cartridge, carrying exactly the signed credential.
    store = open_store(parse_reference(first["cartridge"]), StoreOptions())
    digests = [d.digest for d in store.referrers(first["cartridge"].split("@", 1)[1]).descriptors]
    assert first["attestationDigest"] in digests
    layer = credential_layer(store.fetch_manifest(first["attestationDigest"]))
    assert layer is not None and store.fetch_blob(layer.digest) == credential_bytes
    assert json.loads((out / "result.json").read_text())["attestationDigest"] == first["attestationDigest"]
    # Published: it still counts, the cooldown running from when the games were played.
    assert _attempt(state) == (True, "published", "issued", True)
    # Idempotent: publishing again gives the same credential and attestation digests.
    again = json.loads(cli("attest", "--publish", out, "--key", f"{w.verifier}.key", "--state", state,
                           "--json").output)
    assert (again["credentialDigest"], again["attestationDigest"]) == (first["credentialDigest"],
                                                                       first["attestationDigest"])
    # The push reports per-blob upload progress: the credential, then the one game-records layer.
    seen: list[tuple[int, int, str]] = []
    third = publish_folder(out, ident, state, datetime.now(UTC), StoreOptions(),
                           lambda done, total, text: seen.append((done, total, text)))
    assert third.attestation_digest == first["attestationDigest"]
    assert list((out / "games").glob("game-*.dsse.json"))
    assert [d for d, _, _ in seen] == [1, 2] and {t for _, t, _ in seen} == {2}
    assert seen[0][2] == "uploaded credential.json" and seen[-1][2] == "uploaded game-records.json"
    # A folder that no longer matches what was signed is refused before anything is pushed.
    games = sorted((out / "games").glob("game-*.dsse.json"))
    games[3].write_bytes(games[3].read_bytes().replace(b'"payload"', b'"payload" ', 1))
    bad = cli("attest", "--publish", out, "--key", f"{w.verifier}.key", "--state", state)
    assert bad.exit_code == 1 and "not the ones the credential names" in bad.output
    # A result that already counted keeps its cooldown when a later --publish meets a dead registry.
    kill(own_registry[-1])
    down = cli("attest", "--publish", out, "--key", f"{w.verifier}.key", "--state", state)
    assert down.exit_code == 3, down.output
    assert _attempt(state)[0] is True and _attempt(state)[3] is True


def test_out_is_optional_run_folder_in_state(registry: str, tmp_path: Path) -> None:
    w = build_attest_world(tmp_path, registry)
    res = cli("attest", w.cart, "--benchmark", w.bench, "--key", f"{w.verifier}.key",
              "--issuer", w.verifier_did, "--state", tmp_path / "st", "--competence", "14", "--games", "30",
              "--no-push", "--json")
    assert res.exit_code == 1, res.output
    doc = json.loads(res.output)
    out = Path(doc["outDir"])
    assert out.parent == tmp_path / "st" / "runs" and (out / "result.json").is_file()
    usage = cli("attest", "--publish", out, w.cart, "--key", f"{w.verifier}.key")
    assert usage.exit_code == 2 and "takes no CARTRIDGE_REF" in usage.output
    # A NOT ISSUED run is publishable too: its signed attempt record, idempotently.
    first = cli("attest", "--publish", out, "--key", f"{w.verifier}.key", "--state", tmp_path / "st", "--json")
    assert first.exit_code == 0, first.output
    again = cli("attest", "--publish", out, "--key", f"{w.verifier}.key", "--state", tmp_path / "st", "--json")
    assert json.loads(first.output)["kind"] == "attempt-record"
    assert json.loads(again.output)["attestationDigest"] == json.loads(first.output)["attestationDigest"]
    (out / "attempt-record.json").unlink()
    missing = cli("attest", "--publish", out, "--key", f"{w.verifier}.key", "--state", tmp_path / "st")
    assert missing.exit_code == 2 and "neither credential.json nor attempt-record.json" in missing.output


def test_failed_push_never_frees_the_cooldown(tmp_path: Path) -> None:
    """The attempt counted when its verdict existed: a push that fails leaves it counted and pending."""
    from acx_oci.errors import PublicationFailed, RegistryError
    from acx_oci.services.verifier.publish import publish_attempt

    now = datetime.now(UTC)
    with Ledger(tmp_path / "state") as led:
        attempt_id, refusal = led.begin_attempt(Subject(
            cartridge_ref="r/c@sha256:" + "0" * 64, cartridge_manifest_digest="sha256:" + "0" * 64,
            rom_digest="sha256:" + "1" * 64, benchmark_id="b", benchmark_version="1",
            benchmark_digest="sha256:" + "2" * 64, issuer="did:key:z", solver={}), now=now,
            cooldown=timedelta(hours=24))
        assert refusal is None
        led.finish_attempt(attempt_id, now=now, issued=True, reasons=[])

        def dead() -> Any:
            raise RegistryError("127.0.0.1:1: connection refused")

        with pytest.raises(PublicationFailed, match="attest --publish"):
            publish_attempt(led, attempt_id, tmp_path / "out", dead)
        (a,) = led.attempts()
    assert a.publication == "pending" and a.starts_cooldown is True


def test_registry_failure_during_the_games_is_not_an_attempt(registry: str, tmp_path: Path) -> None:
    """Stopped before its first game was played (here: the solver's registry fetch fails on game 1): no attempt,
    no cooldown, a retry may run."""
    from dataclasses import dataclass

    from acx_oci.errors import RegistryError

    @dataclass(frozen=True)
    class LaneDies(ReferenceSolver):
        def solve(self, task: dict[str, Any], rom_digest: str) -> Any:
            raise RegistryError(f"{registry}: 503 Service Unavailable")

    w = build_attest_world(tmp_path, registry)
    ident = load_identity(f"{w.verifier}.key", did=w.verifier_did)
    req = AttestRequest(cartridge_ref=w.cart, benchmark_ref=w.bench, verifier=ident, solver=LaneDies(33),
                        out_dir=tmp_path / "out", state_dir=tmp_path / "state", sandbox=SandboxOptions(jobs=1))
    with pytest.raises(RegistryError):
        attest(req)
    with Ledger(tmp_path / "state") as led:
        (a,) = led.attempts()
    assert (a.state, a.starts_cooldown) == ("aborted", False)
    req = dataclasses.replace(req, solver=ReferenceSolver(33), out_dir=tmp_path / "out2")
    assert attest(req).status == "issued"  # the retry is not refused by a cooldown


@pytest.mark.parametrize("stop_at", [0, 2])
def test_ctrl_c_before_the_first_game_is_no_attempt_after_it_is(registry: str, tmp_path: Path, stop_at: int) -> None:
    """Ctrl-C at "starting" (no game played) frees the cooldown; Ctrl-C after game 2 keeps it: the retry is refused."""
    w = build_attest_world(tmp_path, registry)
    ident = load_identity(f"{w.verifier}.key", did=w.verifier_did)

    def progress(done: int, total: int, text: str) -> None:
        if done == stop_at:
            raise KeyboardInterrupt

    req = AttestRequest(cartridge_ref=w.cart, benchmark_ref=w.bench, verifier=ident, solver=ReferenceSolver(33),
                        out_dir=tmp_path / "out", state_dir=tmp_path / "state", sandbox=SandboxOptions(jobs=1),
                        progress=progress)
    with pytest.raises(KeyboardInterrupt) as stopped:
        attest(req)
    with Ledger(tmp_path / "state") as led:
        (a,) = led.attempts()
    assert (a.state, a.starts_cooldown) == ("aborted", stop_at > 0)
    # the line the CLI prints says what the Ctrl-C left (it said only "interrupted", and a re-run was refused)
    from acx_oci.cli.main import _failure

    _, exit_code, line = _failure(stopped.value)
    assert exit_code == 130
    if stop_at:
        assert line.startswith("interrupted after the first game: the attempt counts") and "cooldown runs until" \
            in line, line
    else:
        assert line.startswith("interrupted before the first game: no attempt was counted"), line
    retry = attest(dataclasses.replace(req, progress=None, out_dir=tmp_path / "out2"))
    assert retry.status == ("refused" if stop_at else "issued")
    if stop_at:
        assert retry.reasons[0].startswith("cooldown: ") and "next attempt allowed after" in retry.reasons[0]
