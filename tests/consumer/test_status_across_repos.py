"""One verifier, one status list, cartridges in several repositories: attesting one never changes another's
verdict, and a pre-revocation copy put back never un-revokes (issue 34.1; design in docs/concepts.md).

The consumer keeps the newest status list that verified per (URL, issuer) and judges by the newest it holds:
an older copy in a repository is stale, not an error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acx_oci.model import statuslist
from acx_oci.oci import open_store
from acx_oci.services.artifacts import fetch_status_list, publish_status_list

from ..support.cli import cli, ok
from ..support.resolve_world import World, build_resolve_world, push_cartridge


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, registry: str) -> World:
    return build_resolve_world(tmp_path_factory.mktemp("across"), registry)


def _effective(w: World, repo: str, cache: Path) -> dict[str, Any]:
    res = cli("resolve", f"{w.registry}/{repo}:1.0.0", "--trust", str(w.trust), "--json",
              "--status-cache", str(cache))
    assert res.exit_code == 0, res.output
    cap: dict[str, Any] = json.loads(res.output)["capabilities"][0]
    return cap


def _attest(w: World, repo: str, out: Path) -> dict[str, Any]:
    done: dict[str, Any] = ok(cli(
        "attest", f"{w.registry}/{repo}:1.0.0", "--benchmark", f"{w.registry}/acx/bench:2026.07.1",
        "--key", str(w.verifier), "--issuer", w.verifier_did, "--competence", "33",
        "--state", str(w.tmp / "state"), "-o", str(out), "--json"))
    assert done["issued"] is True
    return done


def test_two_repositories_one_list_one_consumer(world: World, tmp_path: Path) -> None:
    w, cache = world, tmp_path / "consumer"
    push_cartridge(w.tmp, w.registry, "acx/first", "first", w.publisher)
    push_cartridge(w.tmp, w.registry, "acx/second", "second", w.publisher)
    _attest(w, "acx/first", tmp_path / "a1")
    assert _effective(w, "acx/first", cache)["effective"] == "VERIFIED"
    second = _attest(w, "acx/second", tmp_path / "a2")  # republishes the list into acx/second only
    assert _effective(w, "acx/second", cache)["effective"] == "VERIFIED"  # the consumer saw the newer list
    first = _effective(w, "acx/first", cache)  # acx/first holds the older copy: stale, not a rollback
    assert first["effective"] == "VERIFIED", first
    # revoke the second; its repository's owner puts the pre-revocation list back
    store = open_store(f"{w.registry}/acx/second:1.0.0")
    before = json.loads((tmp_path / "a2" / "status-list.json").read_bytes())
    ok(cli("revoke", second["attestationDigest"], "--key", str(w.verifier), "--issuer", w.verifier_did,
           "--state", str(w.tmp / "state"), "--json"))
    revoked = _effective(w, "acx/second", cache)
    assert revoked["effective"] == "unproven" and "revoked" in revoked["rejected"][0]["codes"]
    publish_status_list(store, before)
    put_back = fetch_status_list(store, before["id"])
    assert put_back is not None and statuslist.list_sequence(put_back[0]) == statuslist.list_sequence(before)
    still = _effective(w, "acx/second", cache)
    assert still["effective"] == "unproven" and "revoked" in still["rejected"][0]["codes"], still
    assert _effective(w, "acx/first", cache)["effective"] == "VERIFIED"
    assert _effective(w, w.repo, cache)["effective"] == "VERIFIED"  # a third, never republished, copy
