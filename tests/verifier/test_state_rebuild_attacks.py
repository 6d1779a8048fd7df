"""``acx-oci state rebuild`` against a log repository that lies: only bytes the verifier's checkpoint commits to
are believed (an entry bundle swapped under a genuine checkpoint is refused, never restored)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import LogError, VerificationError
from acx_oci.oci import ARTIFACT_ATTESTATION, MEDIA_MANIFEST, StoreOptions, build_manifest, open_store
from acx_oci.services.artifacts import (
    ARTIFACT_LOG,
    CHECKPOINT_TAG,
    MEDIA_ENTRIES,
    MEDIA_TILE_INDEX,
    LogReader,
    entry_bytes,
)
from acx_oci.services.verifier.log_publish import publish
from acx_oci.services.verifier.log_tree import TransLog
from acx_oci.services.verifier.rebuild import rebuild
from acx_oci.tlog import MEDIA_TYPE as MEDIA_LOG_PROOF
from acx_oci.tlog import entry_bundle, parse_checkpoint_text
from acx_oci.tlog import parse as parse_note
from acx_oci.tlog.proof import SCHEMA_VERSION
from acx_oci.trust import load_identity

from ..support.cli import cli, ok

DIGEST = "sha256:" + "ab" * 32
URL = "https://v.example/status/3f1d2c4e-8a6b-4c2d-9e0f-1a2b3c4d5e6f"


def _attempt(i: int) -> dict[str, object]:
    return {"kind": "attempt", "time": f"2026-12-02T01:0{i}:00Z", "cartridgeId": "io.example/agent",
            "romDigest": DIGEST, "benchmarkDigest": DIGEST, "capability": "build-dag@data-engineering",
            "verdict": "not-issued", "reasons": ["sigma_gate"], "mu": 20.0, "sigma": 3.0, "level": 20,
            "recordDigest": f"sha256:{i:064x}"}


def test_a_swapped_entry_bundle_under_a_genuine_checkpoint_is_refused(tmp_path: Path, registry: str) -> None:
    ok(cli("keygen", str(tmp_path / "verifier")))
    ident = load_identity(tmp_path / "verifier.key")
    honest: list[dict[str, object]] = [_attempt(1), _attempt(2), _attempt(3),
              {"kind": "status-list", "time": "2026-12-02T02:00:00Z", "url": URL, "sequence": 9, "digest": DIGEST}]
    log = TransLog(tmp_path / "orig", ident.private)
    log.append(honest)
    repo = f"{registry}/acx/lying-log"
    store = open_store(repo)
    publish(log, store)

    # The registry keeps the verifier's signed checkpoint and hash tiles, and serves another bundle: the attempts
    # gone (cooldowns and acx:attempt counts reset) and the list's sequence rolled back to 1.
    rotation: dict[str, object] = {"kind": "key-rotation", "time": "2026-12-02T01:00:00Z",
                                   "previousKey": "z6MkA", "newKey": "z6MkB"}
    lie: list[dict[str, object]] = [rotation] * 3
    lie.append({**honest[3], "sequence": 1})
    head = LogReader(store).head()
    (path,) = [p for p in head.index if p.startswith("tile/entries/")]
    forged = store.push_blob(entry_bundle([entry_bytes(e) for e in lie]), MEDIA_ENTRIES)
    index = store.push_blob(canonical({"size": 4, "tiles": {**head.index, path: forged.digest}}), MEDIA_TILE_INDEX)
    note = store.push_blob(head.note, "application/vnd.acx.tlog.checkpoint.v1")
    store.push_manifest(build_manifest(ARTIFACT_LOG, [note, index]), MEDIA_MANIFEST, tag=CHECKPOINT_TAG)
    assert LogReader(open_store(repo)).head().index[path] == forged.digest != sha256_digest(log.read(path))

    state = tmp_path / "state"
    with pytest.raises(LogError, match="entry"):
        rebuild(state, ident, log=repo, origin=None, repositories=[], options=StoreOptions(plain_http=True))
    assert not state.exists()
    res = cli("state", "rebuild", "--key", tmp_path / "verifier.key", "--state", state, "--log", repo, "--json")
    assert res.exit_code == 1 and "Traceback" not in res.output and not state.exists(), res.output
    assert json.loads(res.stdout or "{}").get("logSize") is None


def test_force_never_drops_entries_the_states_own_log_holds(tmp_path: Path, registry: str) -> None:
    """--force over a state whose log is ahead of the published one (an append whose publication failed), or
    without --log at all, would delete entries the verifier signed: the next append signs another tree of the same
    size (an equivocation) and those attempts are gone. Refused, and the state is left as it was."""
    ok(cli("keygen", str(tmp_path / "verifier")))
    ident = load_identity(tmp_path / "verifier.key")
    state, repo = tmp_path / "state", f"{registry}/acx/ahead-log"
    log = TransLog(state, ident.private)
    log.append([_attempt(1), _attempt(2)])
    publish(log, open_store(repo))
    log.append([_attempt(3)])  # signed, not published
    before = (state / "log" / "checkpoint").read_bytes()
    for extra in (("--log", repo), ("--repository", repo)):
        res = cli("state", "rebuild", "--key", tmp_path / "verifier.key", "--state", state, "--force", *extra)
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        assert ("log publish" if extra[0] == "--log" else "--log REPO") in res.output, res.output
        assert (state / "log" / "checkpoint").read_bytes() == before
    publish(log, open_store(repo))  # once published, the rebuild takes it
    res = cli("state", "rebuild", "--key", tmp_path / "verifier.key", "--state", state, "--force", "--log", repo,
              "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["logSize"] == 3, res.output


def test_a_referrer_flood_is_read_within_a_bound(tmp_path: Path, registry: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Every tag of a repository flooded with attestations nobody signed: the rebuild reads at most MAX_READS
    documents and listings per repository, says so, and keeps nothing it could not verify."""
    from acx_oci.oci import EMPTY_JSON, MEDIA_EMPTY
    from acx_oci.services.artifacts import push_attestation
    from acx_oci.services.verifier import rebuild_sources

    ok(cli("keygen", str(tmp_path / "verifier")))
    ident = load_identity(tmp_path / "verifier.key")
    repo = f"{registry}/acx/flooded"
    store = open_store(repo)
    store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    subject = store.push_manifest(build_manifest("application/vnd.example.thing", []), MEDIA_MANIFEST, tag="1.0.0")
    for i in range(6):
        forged = canonical({"issuer": ident.did, "id": f"urn:uuid:{i}", "credentialSubject": {}})
        push_attestation(store, subject, forged, [])
    monkeypatch.setattr(rebuild_sources, "MAX_READS", 5)
    report = rebuild(tmp_path / "state", ident, log=None, origin=None, repositories=[repo],
                     options=StoreOptions(plain_http=True))
    assert report.attempts == 0 and any("5 registry reads" in w for w in report.warnings), report.warnings


def test_a_list_the_log_signed_but_no_repository_holds_is_refused(tmp_path: Path, registry: str) -> None:
    """The publisher deletes its repository's copy of a list (the one showing its credential revoked) and keeps the
    credential: with no copy found, the rebuilt list has no bit set, and the next status-refresh would sign it newer
    than any copy a consumer holds: an un-revocation. Refused like an older copy (unless --allow-older-lists)."""
    from datetime import UTC, datetime

    from acx_oci.model import statuslist
    from acx_oci.model.credential import sign_credential
    from acx_oci.oci import EMPTY_JSON, MEDIA_EMPTY
    from acx_oci.services.artifacts import push_attestation

    ok(cli("keygen", str(tmp_path / "verifier")))
    ident = load_identity(tmp_path / "verifier.key")
    log_repo, repo = f"{registry}/acx/deleted-list-log", f"{registry}/acx/deleted-list"
    log = TransLog(tmp_path / "orig", ident.private)
    log.append([{"kind": "status-list", "time": "2026-12-02T02:00:00Z", "url": URL, "sequence": 3,
                 "digest": DIGEST}])
    publish(log, open_store(log_repo))
    store = open_store(repo)
    store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    subject = store.push_manifest(build_manifest("application/vnd.example.thing", []), MEDIA_MANIFEST, tag="1.0.0")
    now = datetime.now(UTC).replace(microsecond=0)
    cred = sign_credential({"issuer": ident.did, "id": "urn:uuid:5d0c7f7e-8d8a-4f61-9c7e-3b1e2f0a9d11",
                            "validFrom": "2026-12-02T01:00:00Z", "credentialSubject": {},
                            "credentialStatus": statuslist.status_entry(URL, 7)},
                           ident, ident.verification_method, now)
    push_attestation(store, subject, canonical(cred), [])

    def run(*extra: str) -> Any:
        return cli("state", "rebuild", "--key", tmp_path / "verifier.key", "--state", tmp_path / f"s{len(extra)}",
                   "--log", log_repo, "--repository", repo, "--json", *extra)

    refused = run()
    assert refused.exit_code == 2 and "no copy" in refused.output and "--allow-older-lists" in refused.output
    forced = run("--allow-older-lists")
    assert forced.exit_code == 0, forced.output
    doc = json.loads(forced.stdout)
    assert doc["credentials"] == 1 and doc["statusLists"][0]["sequence"] == 3
    assert any("revoke" in w for w in doc["warnings"]), doc["warnings"]


def test_an_older_genuine_checkpoint_served_again_is_refused_with_and_without_witnesses(
        tmp_path: Path, registry: str) -> None:
    """Issue 42.2: the registry serves the verifier's older checkpoint (its blobs are all still there). Before, the
    rebuild restored 2 of 3 attempts with no warning, and the next append forked the log. The later publication's
    ``tiles-3`` tag refuses it; with that tag gone too, a witness that cosigned size 3 does; with no witness, the
    rebuild says the freshness is unproven; --accept-older-checkpoint rebuilds and records the choice."""
    import httpx

    from acx_oci.services.verifier.log_tree import Witness
    from acx_oci.tlog import raw_public
    from acx_oci.tlog.checkpoint import sigsum_cosigner

    from ..support.sigsum_witness import sigsum_witness

    ok(cli("keygen", str(tmp_path / "verifier")))
    ident = load_identity(tmp_path / "verifier.key")
    repo = f"{registry}/acx/replayed-log"
    store = open_store(repo)
    with sigsum_witness(tmp_path, ident.private) as w:
        cosigner = sigsum_cosigner(raw_public(w.key))
        log = TransLog(tmp_path / "orig", ident.private, witnesses=[Witness(w.url, cosigner)])
        log.append([_attempt(1), _attempt(2)])
        publish(log, store)
        old = store.fetch_manifest_raw(CHECKPOINT_TAG)
        log.append([_attempt(3)])  # cosigned by the witness at size 3
        publish(log, store)
        store.push_manifest(old[0], old[1], CHECKPOINT_TAG)  # the older genuine checkpoint, served again
        assert LogReader(open_store(repo)).head().checkpoint.size == 2
        key, state = tmp_path / "verifier.key", tmp_path / "state"
        res = cli("state", "rebuild", "--key", key, "--state", state, "--log", repo, "--json")
        assert res.exit_code == 1 and "tiles-3" in res.output and "Traceback" not in res.output, res.output
        assert not state.exists()
        later = store.resolve("tiles-3").digest  # the later publication's tag removed as well
        assert httpx.delete(f"http://{registry}/v2/acx/replayed-log/manifests/{later}").status_code == 202
        witness = f"{w.url}={cosigner.vkey()}"
        res = cli("state", "rebuild", "--key", key, "--state", state, "--log", repo, "--witness", witness, "--json")
        assert res.exit_code == 1 and "cosigned size 3" in res.output and not state.exists(), res.output
        res = cli("state", "rebuild", "--key", key, "--state", state, "--log", repo, "--json")
        unproven = json.loads(ok(res, 0) and res.stdout)
        assert unproven["logSize"] == 2 and any("unproven" in x for x in unproven["warnings"]), unproven
        res = cli("state", "rebuild", "--key", key, "--state", state, "--log", repo, "--force", "--witness", witness,
                  "--accept-older-checkpoint", "--json")
        accepted = json.loads(ok(res, 0) and res.stdout)
        assert any("accepted an older checkpoint" in x for x in accepted["warnings"]), accepted
        conf = json.loads((state / "config.json").read_text())
        assert conf["acceptedOlderCheckpoint"]["size"] == 2 and conf["acceptedOlderCheckpoint"]["evidence"]
    behind = TransLog(state, ident.private)  # the accepted state appends: its log must not be published over
    behind.append([_attempt(4)])
    store.push_manifest(store.fetch_manifest_raw(CHECKPOINT_TAG)[0], MEDIA_MANIFEST, "tiles-9")
    with pytest.raises(LogError, match="tiles-9"):
        publish(behind, store)


def test_a_forged_proof_index_never_refuses_an_honest_rebuild(tmp_path: Path, registry: str) -> None:
    """Attack review of 42.2: a log proof counts as evidence of a longer log only when its inclusion path holds
    (anyone who can push to a scanned repository can write an index next to the public checkpoint note)."""
    ok(cli("keygen", str(tmp_path / "verifier")))
    ident = load_identity(tmp_path / "verifier.key")
    log = TransLog(tmp_path / "orig", ident.private)
    log.append([_attempt(1), _attempt(2)])
    repo = f"{registry}/acx/honest-log"
    publish(log, open_store(repo))  # the newest checkpoint is served: nothing is stale
    note = LogReader(open_store(repo)).head().note
    origin = parse_checkpoint_text(parse_note(note).text).origin
    # the publisher's repository: any tagged manifest, and an "attestation" referrer with a proof layer
    pub = open_store(f"{registry}/pub/grief")
    cart = pub.push_blob(b"{}", "application/vnd.example.x")
    subject = pub.push_manifest(build_manifest("application/vnd.example.x", [cart]), MEDIA_MANIFEST, tag="1.0.0")
    proof = json.dumps({"schemaVersion": SCHEMA_VERSION, "origin": origin, "index": 10**6, "entry": {},
                        "inclusion": [], "checkpoint": note.decode()}).encode()
    layer = pub.push_blob(proof, MEDIA_LOG_PROOF)
    pub.push_referrer(build_manifest(ARTIFACT_ATTESTATION, [layer], subject=subject), subject.digest)
    try:
        report = rebuild(tmp_path / "state", ident, log=repo, origin=None, repositories=[f"{registry}/pub/grief"],
                         options=StoreOptions(plain_http=True))
    except VerificationError as exc:
        pytest.fail(f"an honest rebuild refused on an unauthenticated proof index: {exc}")
    assert report.log_size == 2
