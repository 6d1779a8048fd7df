"""Issue 5 end to end on a real CNCF Distribution registry (no Referrers API: tag-schema fallback).

attest pushes the attestation as a referrer; skopeo sees subject and artifactType; the sha256-<hex>
index lists it; discover lists it; resolve turns the claim VERIFIED; a SAVE-edited copy, a
self-issued credential and a revoked one are all rejected with their reason codes.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import canonical
from acx_oci.model import credential as cred_mod
from acx_oci.model import statuslist
from acx_oci.oci import fallback_tag, open_store
from acx_oci.services.artifacts import fetch_status_list, publish_status_list, push_attestation
from acx_oci.services.consumer import StatusHistory, resolve_cartridge
from acx_oci.services.verifier import AttestRequest
from acx_oci.services.verifier.attest import STATUS_LIST_VALIDITY, attest
from acx_oci.solvers import ReferenceSolver
from acx_oci.timeutil import parse_datetime
from acx_oci.trust import load_identity, load_trust

from ..support.cli import cli, ok
from ..support.env import repeats
from ..support.resolve_world import World, build_resolve_world, push_cartridge


def skopeo_raw(ref: str) -> dict[str, Any]:
    out = subprocess.run(["skopeo", "inspect", "--raw", "--tls-verify=false", f"docker://{ref}"],
                         check=True, capture_output=True).stdout
    doc: dict[str, Any] = json.loads(out)
    return doc


@pytest.fixture(scope="module", params=["distribution", pytest.param("ggcr", marks=pytest.mark.slow)])
def world(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> World:
    """Every test here runs on CNCF Distribution (tag-schema fallback) and, slow, on go-containerregistry's
    registry (Referrers API that reports the config media type as artifactType, ignores the filter)."""
    registry = request.getfixturevalue("registry" if request.param == "distribution" else "ggcr")
    w = build_resolve_world(tmp_path_factory.mktemp(f"resolve-{request.param}"), registry)
    return dataclasses.replace(w, kind=request.param)


def resolve_json(w: World, ref: str, *extra: str) -> dict[str, Any]:
    res = cli("resolve", ref, "--trust", str(w.trust), "--json", *extra)
    assert res.exit_code == 0, res.output
    doc: dict[str, Any] = json.loads(res.output)
    return doc


def test_attestation_is_a_referrer_visible_to_skopeo_and_discover(world: World) -> None:
    w = world
    att = skopeo_raw(f"{w.registry}/{w.repo}@{w.attest_out['attestationDigest']}")
    assert att["artifactType"] == "application/vnd.acx.level-attestation.v1"
    assert att["subject"]["digest"] == w.cart["manifestDigest"]
    assert att["layers"][0]["mediaType"] == "application/vc"
    assert [x["mediaType"] for x in att["layers"][1:]] == ["application/vnd.acx.game-records.v1+json"]
    assert att["annotations"]["dev.acx.level.career-tier"] == w.attest_out["careerTier"]
    if w.kind == "distribution":  # no Referrers API: the tag-schema index lists it
        index = skopeo_raw(f"{w.registry}/{w.repo}:{fallback_tag(w.cart['manifestDigest'])}")
        assert w.attest_out["attestationDigest"] in [m["digest"] for m in index["manifests"]]
    found = ok(cli("discover", f"{w.registry}/{w.repo}:1.0.0", "--json"))
    assert w.attest_out["attestationDigest"] in [r["digest"] for r in found["referrers"]]
    assert found["source"] == ("fallback" if w.kind == "distribution" else "api")
    if w.kind == "ggcr":  # listed with the config media type as artifactType; discover still types it
        typed = ok(cli("discover", f"{w.registry}/{w.repo}:1.0.0", "--json", "--artifact-type",
                       "application/vnd.acx.level-attestation.v1"))
        assert w.attest_out["attestationDigest"] in [r["digest"] for r in typed["referrers"]]
        assert typed["classifiedByManifest"] >= 1 and typed["notes"]
    tree = ok(cli("discover", f"{w.registry}/{w.repo}:1.0.0"))
    assert "application/vnd.acx.level-attestation.v1" in tree and w.attest_out["attestationDigest"] in tree


def test_resolve_verified_and_agent_card(world: World) -> None:
    w = world
    doc = resolve_json(w, f"{w.registry}/{w.repo}:1.0.0")
    cap = doc["capabilities"][0]
    assert cap["effective"] == "VERIFIED", cap
    # issue 34: effective keeps its meaning for scripts; simulated and the solver say what played
    assert cap["simulated"] is True and cap["solver"] == "reference"
    assert cap["careerTier"] == w.attest_out["careerTier"] and cap["issuer"] == w.verifier_did
    assert abs(cap["mu"] - w.attest_out["mu"]) < 1e-12 and doc["partial"] is False
    # ggcr's listing types every acx artifact as its empty config: classified by manifest, and said so
    assert (doc["classifiedByManifest"] > 0) == (w.kind == "ggcr"), doc["notes"]
    human = ok(cli("resolve", f"{w.registry}/{w.repo}:1.0.0", "--trust", str(w.trust)))
    # the demo cartridge has no runtime: its level was simulated, and the human output says so, never VERIFIED
    assert f"SIMULATED tier={w.attest_out['careerTier']}" in human and "VERIFIED tier" not in human
    assert "replayed: every deciding credential" in human
    card = ok(cli("agent-card", f"{w.registry}/{w.repo}:1.0.0", "--trust", str(w.trust),
                  "--sign", str(w.verifier)))
    ext = card["capabilities"]["extensions"][0]
    assert ext["uri"] == "https://acx.dev/a2a/ext/capability/v1"
    proficiency = ext["params"]["records"][0]["proficiency"]
    assert proficiency["verified"] is True and proficiency["simulated"] is True
    assert proficiency["solver"] == "reference"  # the card names the solver ...
    assert "SIMULATED" in card["skills"][0]["description"] and "solver: reference" in card["skills"][0]["description"]
    assert "signature: intact, untrusted" in human or "signature: intact, trusted" in human  # never "warning"
    assert card["provider"]["organization"] == "example" and card["version"] == "1.0.0"
    assert len(card["skills"]) == 1 and card["signatures"]
    # issue 44.5: no A2A endpoint was given, so none is made up (it was oci://<the reference>, for a layout a path)
    assert "url" not in card and "--url" in ext["params"]["urlOmitted"]
    given = ok(cli("agent-card", f"{w.registry}/{w.repo}:1.0.0", "--trust", str(w.trust),
                   "--url", "https://agents.example/dag-agent"))
    assert given["url"] == "https://agents.example/dag-agent" and "urlOmitted" not in \
        given["capabilities"]["extensions"][0]["params"]
    for bad in ("oci://x", "http://agents.example/a", "https://"):
        res = cli("agent-card", f"{w.registry}/{w.repo}:1.0.0", "--trust", str(w.trust), "--url", bad)
        assert res.exit_code == 2 and "A2A endpoint" in res.output and "Traceback" not in res.output, res.output
    from acx_oci.model.agentcard import verify_agent_card

    assert verify_agent_card(card, load_identity(w.verifier).public_bytes)
    card["skills"][0]["name"] = "forged"
    assert not verify_agent_card(card, load_identity(w.verifier).public_bytes)


def test_agent_card_out_well_known_and_verify(world: World, tmp_path: Path) -> None:
    w = world
    ref = f"{w.registry}/{w.repo}:1.0.0"
    site = tmp_path / "site"
    assert "wrote" in ok(cli("agent-card", ref, "--trust", str(w.trust), "--sign", str(w.verifier), "--out", site))
    path = site / ".well-known" / "agent-card.json"
    card = json.loads(path.read_text())
    assert card["signatures"] and card["skills"][0]["id"]
    verified = ok(cli("agent-card", "verify", path, "--trust", str(w.trust)))
    assert verified.startswith(f"VERIFIED agent card signed by {w.verifier_did}#")
    assert ok(cli("agent-card", "verify", path, "--did-document", w.tmp / "verifier.did.json", "--json"))["verified"]
    offline = cli("agent-card", "verify", path)  # a did:web signer with no document and no network
    assert offline.exit_code == 1 and "cannot resolve" in offline.output
    card["skills"][0]["name"] = "forged"
    path.write_text(json.dumps(card))
    forged = cli("agent-card", "verify", path, "--trust", str(w.trust))
    assert forged.exit_code == 1 and "does not verify" in forged.output
    unsigned = tmp_path / "unsigned.json"
    unsigned.write_text(json.dumps({k: v for k, v in card.items() if k != "signatures"}))
    res = cli("agent-card", "verify", unsigned)
    assert res.exit_code == 1 and "no EdDSA signature" in res.output
    # a did:key signer verifies offline; a trust file that does not name it refuses it
    ok(cli("keygen", tmp_path / "stranger"))
    ok(cli("agent-card", "show", ref, "--trust", str(w.trust), "--sign", tmp_path / "stranger.key", "--out", site))
    assert ok(cli("agent-card", "verify", path)).startswith("VERIFIED agent card signed by did:key:")
    stranger = cli("agent-card", "verify", path, "--trust", str(w.trust))
    assert stranger.exit_code == 1 and "not in the trust file" in stranger.output


def test_untrusted_resolver_sees_unproven(world: World, tmp_path: Path) -> None:
    w = world
    (tmp_path / "empty.yaml").write_text("publishers: []\n")
    res = cli("resolve", f"{w.registry}/{w.repo}:1.0.0", "--trust", str(tmp_path / "empty.yaml"), "--json")
    cap = json.loads(res.output)["capabilities"][0]
    assert cap["effective"] == "unproven"
    assert "issuer_untrusted" in cap["rejected"][0]["codes"]


def test_save_edited_copy_and_transplanted_credential_rejected(world: World) -> None:
    w = world
    edited_dir = w.tmp / "strong-edited"
    ok(cli("pull", f"{w.registry}/{w.repo}:1.0.0", "-o", str(edited_dir)))
    (edited_dir / "save.json").write_text('{"notes": ["edited after attestation"]}\n')
    for extra in ("verified-capabilities.json", "rom.json"):
        (edited_dir / extra).unlink(missing_ok=True)
    edited = ok(cli("cartridge", "push", str(edited_dir), f"{w.registry}/{w.repo}:edited", "--key",
                    str(w.publisher), "--json"))
    assert edited["romDigest"] == w.cart["romDigest"] and edited["manifestDigest"] != w.cart["manifestDigest"]
    assert resolve_json(w, f"{w.registry}/{w.repo}:edited")["capabilities"][0]["effective"] == "unproven"
    # copy the honest credential onto the edited manifest as a new attestation
    store = open_store(f"{w.registry}/{w.repo}")
    subject = store.resolve(edited["manifestDigest"])
    cred_bytes = (w.tmp / "att" / "credential.json").read_bytes()
    push_attestation(store, subject, cred_bytes, [])
    cap = resolve_json(w, f"{w.registry}/{w.repo}:edited")["capabilities"][0]
    assert cap["effective"] == "unproven"
    assert any("manifest_mismatch" in r["codes"] for r in cap["rejected"]), cap["rejected"]


def test_self_issued_rejected_while_honest_one_verifies(world: World) -> None:
    w = world
    honest = json.loads((w.tmp / "att" / "credential.json").read_text())
    publisher = load_identity(w.publisher)
    forged = cred_mod.without_proof(honest) if hasattr(cred_mod, "without_proof") else {
        k: v for k, v in honest.items() if k != "proof"}
    forged["issuer"] = {"id": publisher.did, "type": ["Profile"]}
    forged["id"] = "urn:uuid:00000000-0000-4000-8000-000000000001"
    signed = cred_mod.sign_credential(forged, publisher, publisher.verification_method, honest["validFrom"])
    store = open_store(f"{w.registry}/{w.repo}")
    push_attestation(store, store.resolve(w.cart["manifestDigest"]), canonical(signed), [])
    # the publisher is even trusted as a verifier here: self-issuance must still be caught
    trust = w.tmp / "trust-self.yaml"
    trust.write_text(w.trust.read_text().replace("verifiers:\n", f"verifiers:\n  - id: {publisher.did}\n"))
    res = cli("resolve", f"{w.registry}/{w.repo}:1.0.0", "--trust", str(trust), "--json",
              "--allow-unknown-status")
    cap = json.loads(res.output)["capabilities"][0]
    assert cap["effective"] == "VERIFIED" and cap["issuer"] == w.verifier_did
    assert any("self_issued" in r["codes"] for r in cap["rejected"]), cap["rejected"]


def test_pull_require(world: World, tmp_path: Path) -> None:
    w = world
    out = tmp_path / "strong"
    ok(cli("pull", f"{w.registry}/{w.repo}:1.0.0", "-o", str(out), "--trust", str(w.trust),
           "--require", "build-dag>=senior"))
    vc = json.loads((out / "verified-capabilities.json").read_text())
    assert vc["capabilities"][0]["effective"] == "VERIFIED"
    assert len(list((out / "credentials").glob("*.json"))) == 1
    push_cartridge(w.tmp, w.registry, "acx/unattested", "unattested", w.publisher)
    none = tmp_path / "none"
    res = cli("pull", f"{w.registry}/acx/unattested:1.0.0", "-o", str(none), "--trust", str(w.trust),
              "--require", "build-dag>=senior")
    assert res.exit_code == 1 and "requirement not met" in res.output
    assert not none.exists() or not any(none.iterdir())
    res = cli("pull", f"{w.registry}/{w.repo}:1.0.0", "-o", str(tmp_path / "x"), "--trust", str(w.trust),
              "--require", "build-dag>=legend")
    assert res.exit_code == 1 and "build-dag>=legend" in res.output


def test_revoke_makes_it_unproven_and_a_rolled_back_list_is_refused(world: World, tmp_path: Path) -> None:
    w = world
    # a second issued credential on its own cartridge, so revocation doesn't disturb the other tests
    cart = push_cartridge(w.tmp, w.registry, "acx/revokable", "revokable", w.publisher)
    out = ok(cli("attest", f"{w.registry}/acx/revokable:1.0.0", "--benchmark",
                 f"{w.registry}/acx/bench:2026.07.1", "--key", str(w.verifier), "--issuer", w.verifier_did,
                 "--competence", "33", "--state", str(w.tmp / "state"), "-o", str(tmp_path / "att"), "--json"))
    ref = f"{w.registry}/acx/revokable:1.0.0"
    assert resolve_json(w, ref)["capabilities"][0]["effective"] == "VERIFIED"
    offline_list = tmp_path / "att" / "status-list.json"
    before = offline_list.read_bytes()
    store = open_store(ref)
    old_list = json.loads(before)
    issued_at = parse_datetime(old_list["validFrom"])
    assert issued_at is not None
    rev = ok(cli("revoke", out["attestationDigest"], "--key", str(w.verifier), "--issuer", w.verifier_did,
                 "--state", str(w.tmp / "state"), "--json"))
    assert rev["revoked"] is True and not rev["failed"]
    assert any(cart["manifestDigest"] not in p and "acx/revokable" in p for p in rev["published"])
    cap = resolve_json(w, ref)["capabilities"][0]  # this consumer (the default cache) now saw the newer list
    assert cap["effective"] == "unproven"
    assert "revoked" in cap["rejected"][0]["codes"]
    # resolve --require: exit 1, and the failure names the reason (revoked), not only "no verified claim"
    req = cli("resolve", ref, "--trust", str(w.trust), "--require", "build-dag>=senior")
    assert req.exit_code == 1 and "REQUIREMENT NOT MET build-dag>=senior" in req.output
    assert "rejected: " in req.output and "revoked" in req.output.split("REQUIREMENT NOT MET", 1)[1]
    req_json = json.loads(cli("resolve", ref, "--trust", str(w.trust), "--require", "build-dag>=senior",
                              "--json").output)
    assert req_json["requirements"]["required"] == ["build-dag>=senior"]
    assert "revoked" in req_json["requirements"]["unmet"][0]
    # pull --json prints JSON on failure too, with the reason and the exit code
    pulled = cli("pull", ref, "-o", str(tmp_path / "p0"), "--trust", str(w.trust), "--require", "build-dag>=senior",
                 "--json")
    assert pulled.exit_code == 1
    doc = json.loads(pulled.stdout)
    assert doc["pulled"] is False and doc["error"]["exitCode"] == 1 and "revoked" in doc["error"]["message"]
    assert "revoked" in doc["requirements"]["unmet"][0] and not (tmp_path / "p0").exists()
    assert ok(cli("resolve", f"{w.registry}/{w.repo}:1.0.0", "--trust", str(w.trust), "--require", "build-dag>=senior",
                  "--json"))["requirements"]["unmet"] == []
    bad_input = json.loads(cli("pull", f"{w.registry}/acx/absent:1.0.0", "-o", str(tmp_path / "p1"), "--json").stdout)
    assert bad_input["pulled"] is False and bad_input["error"]["exitCode"] == 2
    assert offline_list.read_bytes() != before  # the file publication was updated too
    revoked_list = json.loads(offline_list.read_bytes())
    assert statuslist.list_sequence(revoked_list) > statuslist.list_sequence(old_list) >= 1
    # rollback: the repository owner puts back the pre-revocation list (signed by the verifier)
    publish_status_list(store, old_list)
    assert statuslist.list_sequence(fetch_status_list(store, old_list["id"])[0]) < \
        statuslist.list_sequence(revoked_list)  # type: ignore[index]
    rolled = resolve_json(w, ref)["capabilities"][0]  # this consumer kept the newer list: it judges by that one
    assert rolled["effective"] == "unproven"
    assert "revoked" in rolled["rejected"][0]["codes"], rolled["rejected"]
    assert "status_rollback" not in rolled["rejected"][0]["codes"]
    assert "revoked" in ok(cli("resolve", ref, "--trust", str(w.trust)))  # the text output names it too
    # a consumer that remembers the newer list's sequence but not the list itself (an older cache) calls it a rollback
    marks_only = tmp_path / "marks-only"
    StatusHistory(marks_only).remember(old_list["id"], w.verifier_did, statuslist.list_sequence(revoked_list))
    cap = resolve_json(w, ref, "--status-cache", str(marks_only))["capabilities"][0]
    assert cap["effective"] == "unproven" and "status_rollback" in cap["rejected"][0]["codes"]
    # ... and pull --require / policy check (the same consumer) refuse it as well
    res = cli("pull", ref, "-o", str(tmp_path / "pulled"), "--trust", str(w.trust), "--require", "build-dag>=senior")
    assert res.exit_code == 1 and "requirement not met" in res.output
    # any fresher copy the consumer has (here: the verifier's republished file) still wins and shows the bit
    cap = resolve_json(w, ref, "--status-list", str(offline_list))["capabilities"][0]
    assert cap["effective"] == "unproven" and "revoked" in cap["rejected"][0]["codes"]
    # a first-time consumer (its own, empty cache) cannot tell the put-back list from the newest one ...
    fresh = resolve_json(w, ref, "--status-cache", str(tmp_path / "fresh"))["capabilities"][0]
    assert fresh["effective"] == "VERIFIED"
    # ... until the old list's short validity runs out (one day after it was signed; the clock is injected)
    trust = load_trust(w.trust)
    later = issued_at + STATUS_LIST_VALIDITY + timedelta(minutes=1)
    expired = resolve_cartridge(store, "1.0.0", trust, now=later,
                                status_history=StatusHistory(tmp_path / "fresh-later"))
    assert expired.capabilities[0].effective == "unproven"
    assert "status_stale" in expired.capabilities[0].rejected[0].codes
    # ... or, sharing nothing with the first consumer, once it has seen the newer list itself
    cap = resolve_json(w, ref, "--status-cache", str(tmp_path / "fresh"), "--status-list",
                       str(offline_list))["capabilities"][0]
    assert "revoked" in cap["rejected"][0]["codes"]
    cap = resolve_json(w, ref, "--status-cache", str(tmp_path / "fresh"))["capabilities"][0]
    assert cap["effective"] == "unproven" and "revoked" in cap["rejected"][0]["codes"]  # the kept list decides
    # the verifier's refresh republishes the revoked list everywhere, with a higher sequence again
    ok(cli("status-refresh", "--key", str(w.verifier), "--issuer", w.verifier_did, "--state", str(w.tmp / "state")))
    refreshed = fetch_status_list(store, old_list["id"])
    assert refreshed is not None
    assert statuslist.list_sequence(refreshed[0]) > statuslist.list_sequence(revoked_list)
    cap = resolve_json(w, ref)["capabilities"][0]
    assert cap["effective"] == "unproven" and "revoked" in cap["rejected"][0]["codes"]
    # the strong cartridge (another credential in the same list) is unaffected
    assert resolve_json(w, f"{w.registry}/{w.repo}:1.0.0")["capabilities"][0]["effective"] == "VERIFIED"


def test_unknown_status_fails_closed(world: World, tmp_path: Path) -> None:
    """The status-list tag is missing from a copy of the cartridge's repository: fail closed (unless kept)."""
    w = world
    src = open_store(f"{w.registry}/{w.repo}")
    dst = open_store(f"{w.registry}/acx/copy")
    for digest in (w.cart["manifestDigest"], w.attest_out["attestationDigest"]):
        m = src.fetch_manifest(digest)
        for layer in (m.config, *m.layers):
            dst.push_blob(src.fetch_blob(layer.digest), layer.media_type)
        if m.subject is None:
            dst.push_manifest(m.raw, m.media_type, "1.0.0")
        else:
            dst.push_referrer(m.raw, m.subject.digest, None)
    first_time = tmp_path / "first-time"  # a consumer that never saw the list
    cap = resolve_json(w, f"{w.registry}/acx/copy:1.0.0", "--status-cache", str(first_time))["capabilities"][0]
    assert cap["effective"] == "unproven" and "status_unknown" in cap["rejected"][0]["codes"]
    # one that kept the verifier's newest list (it resolved acx/strong, whose repository has it) judges by it
    assert resolve_json(w, f"{w.registry}/{w.repo}:1.0.0")["capabilities"][0]["effective"] == "VERIFIED"
    assert resolve_json(w, f"{w.registry}/acx/copy:1.0.0")["capabilities"][0]["effective"] == "VERIFIED"
    allowed = resolve_json(w, f"{w.registry}/acx/copy:1.0.0", "--allow-unknown-status", "--status-cache",
                           str(first_time))
    assert allowed["capabilities"][0]["effective"] == "VERIFIED"
    with_file = resolve_json(w, f"{w.registry}/acx/copy:1.0.0", "--status-list",
                             str(w.tmp / "att" / "status-list.json"), "--status-cache", str(first_time))
    assert with_file["capabilities"][0]["effective"] == "VERIFIED"


@pytest.mark.parametrize("repeat", repeats(10))  # repeat 0 always; 1-2 are slow (CI), 3-9 ACX_STRESS=1
def test_eight_concurrent_attests_all_listed(world: World, repeat: int) -> None:
    if world.kind == "ggcr" and repeat:
        pytest.skip("ggcr indexes referrers itself (no read-merge-write to race): repeat 0 suffices")
    w = world
    repo = f"acx/concurrent-{repeat}"
    cart = push_cartridge(w.tmp / f"c{repeat}", w.registry, repo, "agent", w.publisher)
    verifier = load_identity(w.verifier, did=w.verifier_did)
    results: list[Any] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def run(i: int) -> None:
        try:
            barrier.wait()
            results.append(attest(AttestRequest(
                cartridge_ref=f"{w.registry}/{repo}:1.0.0", benchmark_ref=f"{w.registry}/acx/bench:2026.07.1",
                verifier=verifier, solver=ReferenceSolver(33.0), out_dir=w.tmp / f"c{repeat}" / f"out{i}",
                state_dir=w.tmp / f"c{repeat}" / f"state{i}")))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    digests = {r.attestation_digest for r in results}
    assert len(digests) == 8 and None not in digests
    listed = ok(cli("discover", f"{w.registry}/{repo}:1.0.0", "--json"))
    assert digests <= {r["digest"] for r in listed["referrers"]}
    assert cart["manifestDigest"] == listed["subject"]


def test_eight_attest_processes_at_once_all_listed(world: World) -> None:
    """The same race with eight real `acx-oci attest` processes (separate --state dirs)."""
    import sys

    w = world
    repo = "acx/concurrent-procs"
    base = w.tmp / "procs"
    push_cartridge(base, w.registry, repo, "agent", w.publisher)
    procs = [subprocess.Popen(
        [sys.executable, "-m", "acx_oci", "attest", f"{w.registry}/{repo}:1.0.0", "--benchmark",
         f"{w.registry}/acx/bench:2026.07.1", "--key", str(w.verifier), "--issuer", w.verifier_did,
         "--competence", "33", "--state", str(base / f"state{i}"), "-o", str(base / f"out{i}"), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(8)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-300:] for o in outs]
    digests = {json.loads(o[0])["attestationDigest"] for o in outs}
    assert len(digests) == 8
    listed = ok(cli("discover", f"{w.registry}/{repo}:1.0.0", "--json"))
    assert digests <= {r["digest"] for r in listed["referrers"]}
