"""``acx-oci state rebuild``: a lost verifier state rebuilt from its log and registry behaves as the original.

Two cartridges attested (one issued, then revoked), the state directory deleted and rebuilt: a second attest is
refused for the cooldown exactly as with the original state, the next attempt carries the same acx:attempt
count, and the revoked level stays revoked when the rebuilt state re-signs its list (issue 34, Build 2).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from acx_oci.oci import open_store
from acx_oci.services.artifacts import publish_status_list
from acx_oci.services.verifier.ledger import Ledger

from ..support.cli import cli, ok
from ..support.jsondoc import check_document
from ..support.resolve_world import World, build_resolve_world, push_cartridge


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, registry: str) -> World:
    w = build_resolve_world(tmp_path_factory.mktemp("rebuild"), registry)  # one attest, state w.tmp/state, no log
    push_cartridge(w.tmp, registry, "acx/rb-a", "rb-a", w.publisher)
    push_cartridge(w.tmp, registry, "acx/rb-b", "rb-b", w.publisher)
    return w


def _attest(w: World, repo: str, state: Path, out: Path, *extra: str, log: str = "acx/rb-log"
            ) -> tuple[int, dict[str, Any]]:
    res = cli("attest", f"{w.registry}/{repo}:1.0.0", "--benchmark", f"{w.registry}/acx/bench:2026.07.1",
              "--key", str(w.verifier), "--issuer", w.verifier_did, "--competence", "33", "--state", str(state),
              "-o", str(out), "--log", f"{w.registry}/{log}", "--json", *extra)
    return res.exit_code, json.loads(res.stdout)


def _rebuild(w: World, state: Path, *extra: str) -> Any:
    return cli("state", "rebuild", "--key", w.verifier, "--issuer", w.verifier_did, "--state", state,
               "--log", f"{w.registry}/acx/rb-log", "--repository", f"{w.registry}/acx/rb-a",
               "--repository", f"{w.registry}/acx/rb-b", "--json", *extra)


def _resolve(w: World, repo: str, cache: Path) -> dict[str, Any]:
    res = cli("resolve", f"{w.registry}/{repo}:1.0.0", "--trust", str(w.trust), "--json", "--status-cache", cache)
    cap: dict[str, Any] = json.loads(res.stdout)["capabilities"][0]
    return cap


def test_a_rebuilt_state_keeps_cooldowns_counts_and_revocations(world: World, tmp_path: Path) -> None:
    w, state, kept = world, tmp_path / "state", tmp_path / "kept"
    code, a = _attest(w, "acx/rb-a", state, tmp_path / "a1")
    assert code == 0 and a["issued"] is True, a
    code, b = _attest(w, "acx/rb-b", state, tmp_path / "b1")
    assert code == 0 and b["issued"] is True, b
    ok(cli("revoke", b["attestationDigest"], "--key", w.verifier, "--issuer", w.verifier_did, "--state", state,
           "--json"))
    shutil.copytree(state, kept)
    shutil.rmtree(state)

    res = _rebuild(w, state)
    assert res.exit_code == 0, res.output
    report = check_document("state rebuild", res.stdout, res.exit_code)
    assert (report["attempts"], report["issued"], report["credentials"]) == (2, 2, 2), report
    assert report["statusLists"][0]["revoked"] == 1 and "rebuild: log" in res.stderr
    assert report["logSize"] == 4 and (state / "log" / "checkpoint").is_file()  # 2 attempts, 2 lists (revoke: unlogged)
    with Ledger(kept) as original, Ledger(state) as rebuilt:  # the same list, the same sequence, the same bits
        (uid,) = original.status_list_uuids()
        assert rebuilt.status_list_uuids() == [uid] and rebuilt.sequence(uid) == original.sequence(uid) == 3
        assert rebuilt.revoked_indices(uid) == original.revoked_indices(uid) != []
        assert {e["idx"] for e in rebuilt.entries(uid)} == {e["idx"] for e in original.entries(uid)}
    conf = json.loads((state / "config.json").read_text())["log"]  # later commands log to the same log
    assert conf["repository"] == f"{w.registry}/acx/rb-log" and conf["origin"].startswith("sigsum.org/v1/tree/")
    again = _rebuild(w, state)  # never over a state that holds something, unless asked
    assert again.exit_code == 2 and "not empty" in again.output and "--force" in again.output

    # The cooldown: refused exactly as the original state refuses it.
    for s in (kept, state):
        code, res_a = _attest(w, "acx/rb-a", s, tmp_path / f"a2-{s.name}")
        assert code == 2 and res_a["reasons"][0].startswith("cooldown:"), res_a
    # The count: the next attempt on A is attempt 2, as the original state numbers it (its ledger holds the same
    # played attempts: compared above, and A's first credential says 1).
    code, res_a = _attest(w, "acx/rb-a", state, tmp_path / "a3", "--cooldown", "0")
    assert code == 0, res_a
    for out, want in (("a1", 1), ("a3", 2)):
        cred = json.loads((tmp_path / out / "credential.json").read_text())
        assert cred["credentialSubject"]["result"][0]["acx:attempt"]["sequence"] == want
    with Ledger(kept) as original, Ledger(state) as rebuilt:
        assert original.attempt_count(original.attempts()[0].id).sequence == 1
        played = [a for a in rebuilt.attempts() if a.state == "issued" and a.cartridge_id == "io.example/rb-a"]
        assert [rebuilt.attempt_count(a.id).sequence for a in played] == [1, 2]

    # The revoked level stays revoked: the rebuilt state re-signs its list with B's bit set, and a newer sequence.
    ok(cli("status-refresh", "--key", w.verifier, "--issuer", w.verifier_did, "--state", state, "--json"))
    fresh = tmp_path / "consumer"
    revoked = _resolve(w, "acx/rb-b", fresh)
    assert revoked["effective"] != "VERIFIED" and "revoked" in revoked["rejected"][0]["codes"], revoked
    assert _resolve(w, "acx/rb-a", fresh)["effective"] == "VERIFIED"

    # Copies older than the log's last signature (B's pre-revocation list put back in both repositories) are
    # refused: re-signing from them would un-revoke B. --allow-older-lists rebuilds anyway, and says so.
    before = json.loads((tmp_path / "b1" / "status-list.json").read_bytes())
    for repo in ("acx/rb-a", "acx/rb-b"):
        publish_status_list(open_store(f"{w.registry}/{repo}"), before)
    refused = _rebuild(w, tmp_path / "again")
    assert refused.exit_code == 2 and "would be lost" in refused.output and not (tmp_path / "again").exists()
    forced = _rebuild(w, tmp_path / "again", "--allow-older-lists")
    assert forced.exit_code == 0 and "revoke it again" in " ".join(json.loads(forced.stdout)["warnings"])


def test_a_publisher_that_deletes_its_records_keeps_its_publisher_cooldown(world: World, tmp_path: Path) -> None:
    """The log entry names the publisher key: rebuilt from the log alone (every record deleted), a second cartridge
    id of the same ROM signer is refused under ``--cooldown-scope publisher`` as with the original state."""
    w, state = world, tmp_path / "state"
    push_cartridge(w.tmp, w.registry, "acx/rb-p1", "rb-p1", w.publisher)
    push_cartridge(w.tmp, w.registry, "acx/rb-p2", "rb-p2", w.publisher)
    code, first = _attest(w, "acx/rb-p1", state, tmp_path / "p1", "--cooldown-scope", "publisher", log="acx/rb-plog")
    assert code == 0 and first["issued"] is True, first
    shutil.rmtree(state)
    res = cli("state", "rebuild", "--key", w.verifier, "--issuer", w.verifier_did, "--state", state, "--log",
              f"{w.registry}/acx/rb-plog", "--json")
    assert res.exit_code == 0, res.output  # no --repository: the records are gone, only the log remains
    with Ledger(state) as rebuilt:
        (row,) = rebuilt.attempts()
        assert row.publisher_key is not None and row.publisher_key.startswith("did:key:")
    code, second = _attest(w, "acx/rb-p2", state, tmp_path / "p2", "--cooldown-scope", "publisher", log="acx/rb-plog")
    assert code == 2 and "same publisher key" in second["reasons"][0], second
