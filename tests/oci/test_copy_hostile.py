"""``acx-oci copy`` against what it cannot read: a destination whose status list does not answer must not be
overwritten by an older list (a revocation rolled back), and a copy must fail rather than guess.

The registry is the real CNCF Distribution; the fault-injecting proxy in front of it answers the destination's
``acx-status-<uuid>`` manifest GET with 503 (every retry), as a registry under load or an attacker on the
path can.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from acx_oci import reasons
from acx_oci.crypto import Identity, dataintegrity
from acx_oci.errors import StatusReplaceRefused
from acx_oci.model import statuslist
from acx_oci.model.credential import sign_credential
from acx_oci.oci import open_store
from acx_oci.services.artifacts import fetch_status_list, publish_status_list, push_attestation, status_tag
from acx_oci.services.consumer import CopyRequest, copy_artifact
from acx_oci.trust import load_trust

from ..support.cli import cli, ok
from ..support.faultproxy import FaultProxy
from ..support.resolve_world import World, build_resolve_world


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, registry: str) -> World:
    return build_resolve_world(tmp_path_factory.mktemp("copy-hostile"), registry)


@pytest.fixture
def proxy(registry: str) -> Iterator[FaultProxy]:
    with FaultProxy(registry) as p:
        yield p


def test_an_unreadable_destination_list_is_never_overwritten_by_a_stale_one(world: World, proxy: FaultProxy,
                                                                             tmp_path: Path) -> None:
    w = world
    src = f"{w.registry}/{w.repo}:1.0.0"
    stale = tmp_path / "stale"
    ok(cli("copy", src, f"oci:{stale}", "--quiet"))  # a bundle with today's list
    mirror = "hostile-mirror/strong"
    ok(cli("status-refresh", "--key", w.verifier, "--issuer", w.verifier_did, "--state", w.tmp / "state"))
    ok(cli("copy", src, f"{w.registry}/{mirror}", "--quiet"))  # the mirror gets the newer list
    url = json.loads((w.tmp / "att" / "credential.json").read_text())["credentialStatus"]["statusListCredential"]
    tag = status_tag(url)
    fresh = open_store(f"{w.registry}/{mirror}").resolve(tag).digest
    proxy.add("status", method="GET", path=f"/manifests/{tag}", status=503)
    res = cli("copy", f"oci:{stale}:1.0.0", f"{proxy.host}/{mirror}", "--json")
    assert res.exit_code == 3, res.output
    assert "could not be read, so it is not replaced" in res.output
    assert open_store(f"{w.registry}/{mirror}").resolve(tag).digest == fresh
    assert any(a == "status" for _, _, a in proxy.log)


def test_a_large_blob_streaming_past_its_size_stops_at_the_size(registry: str, proxy: FaultProxy,
                                                                 tmp_path: Path) -> None:
    """Above the streaming threshold a copy read the blob to a temporary with no size: a source could send up to
    the 4 GiB cap before the digest check; now the read stops at the descriptor's size."""
    from acx_oci.oci import MEDIA_MANIFEST, build_manifest
    from acx_oci.oci.transfer import STREAM_THRESHOLD

    (tmp_path / "big.bin").write_bytes(os.urandom(STREAM_THRESHOLD + 4096))
    src = open_store(f"{registry}/hostile/big")
    layer = src.push_blob_file(tmp_path / "big.bin", "application/octet-stream")
    src.push_manifest(build_manifest("application/vnd.example.big", [layer]), MEDIA_MANIFEST, "v1")
    proxy.add("extra", method="GET", path=f"/blobs/{layer.digest}", extra=64 * 1024 * 1024, interval=0)
    for dst in (f"oci:{tmp_path / 'bundle'}", f"{registry}/hostile/big-copy"):
        res = cli("copy", f"{proxy.host}/hostile/big:v1", dst, "--quiet")
        assert res.exit_code == 1, res.output
        assert f"more bytes than the {layer.size} its descriptor gives" in res.output
    assert not [p for p in (tmp_path / "bundle" / "blobs").rglob("*") if p.name.startswith(".")]  # no temporary


def test_the_plan_refuses_more_manifest_bytes_than_its_cap() -> None:
    """A source listing thousands of 4 MiB referrers: the plan (held in memory) stops at its byte cap."""
    from acx_oci.errors import UsageError
    from acx_oci.oci import CopyPlan, PlannedManifest
    from acx_oci.oci.transfer import MAX_PLAN_MANIFEST_BYTES

    plan = CopyPlan()
    raw = b" " * (4 * 1024 * 1024)
    n = MAX_PLAN_MANIFEST_BYTES // len(raw)
    for i in range(n):
        plan.add(PlannedManifest(raw, "application/vnd.oci.image.manifest.v1+json", f"sha256:{i:064x}"), [])
    with pytest.raises(UsageError, match="bytes of manifests"):
        plan.add(PlannedManifest(raw, "application/vnd.oci.image.manifest.v1+json", f"sha256:{n:064x}"), [])
    assert len(plan.manifests) == n


def _forge(doc: dict[str, Any], signer: Identity, issuer: str, method: str, bump: int = 1000) -> dict[str, Any]:
    """The source's list with a much higher sequence, an issuer and a proof of our choosing."""
    forged = copy.deepcopy(doc)
    forged["issuer"] = issuer
    forged["credentialSubject"][statuslist.SEQUENCE] = statuslist.list_sequence(doc) + bump
    return statuslist.sign_status_list(forged, signer, method, datetime.now(UTC))


def test_a_forged_newer_list_in_a_hostile_source_never_replaces_the_mirrors(world: World, tmp_path: Path) -> None:
    """A source registry anyone can push to: a list with a higher sequence but a stranger's proof (the real issuer's
    name with another key, or another issuer altogether) is refused, exit 1, and the mirror keeps its good list."""
    w = world
    src = f"{w.registry}/{w.repo}:1.0.0"
    mirror, hostile = f"{w.registry}/sig-mirror/strong", f"{w.registry}/sig-hostile/strong"
    ok(cli("copy", src, mirror, "--quiet"))
    ok(cli("copy", src, hostile, "--quiet"))
    url = json.loads((w.tmp / "att" / "credential.json").read_text())["credentialStatus"]["statusListCredential"]
    tag = status_tag(url)
    good = open_store(mirror).resolve(tag).digest
    real = fetch_status_list(open_store(hostile), url)
    assert real is not None
    stranger = Identity(Ed25519PrivateKey.generate(), "did:key:placeholder")
    stranger = Identity(stranger.private, stranger.did_key)
    forgeries = {
        "issuer's name, another key": _forge(real[0], stranger, w.verifier_did, f"{w.verifier_did}#key-1"),
        "another issuer": _forge(real[0], stranger, stranger.did, stranger.verification_method),
    }
    for what, forged in forgeries.items():
        publish_status_list(open_store(hostile), forged)
        for trust in (("--trust", str(w.trust)), ()):
            res = cli("copy", f"{hostile}:1.0.0", mirror, "--json", *trust)
            assert res.exit_code == 1, (what, trust, res.output)
            line = res.stderr.strip()  # one line on stderr; stdout has the --json document with the same reason
            assert "\n" not in line and "Traceback" not in line, line
            assert json.loads(res.stdout)["code"] == reasons.STATUS_REPLACE_REFUSED, res.stdout
            assert isinstance(res.exception, SystemExit)
            assert f"{tag}: the source's status list" in line and "the destination's list is kept" in line, line
            why = ("does not verify as its issuer" if what != "another issuer" else  # (its did:web needs --trust)
                   "the credentials that name it were issued by" if trust else "cannot be checked here")
            assert why in line, (what, trust, line)
            assert open_store(mirror).resolve(tag).digest == good, (what, trust)
        with pytest.raises(StatusReplaceRefused) as caught:  # the library's error: a VerificationError, its code
            copy_artifact(CopyRequest(f"{hostile}:1.0.0", mirror, datetime.now(UTC), trust=load_trust(w.trust)))
        assert caught.value.code == "status_replace_refused" and caught.value.exit_code == 1
    # the mirror still resolves with its own list; and a genuinely newer list from the issuer does replace it
    assert ok(cli("resolve", f"{mirror}:1.0.0", "--trust", w.trust, "--json"))["capabilities"][0]["effective"] \
        == "VERIFIED"
    ok(cli("status-refresh", "--key", w.verifier, "--issuer", w.verifier_did, "--state", w.tmp / "state"))
    ok(cli("copy", src, mirror, "--quiet", "--trust", w.trust))
    assert open_store(mirror).resolve(tag).digest != good


def _hostile_copy(w: World, name: str) -> tuple[str, str, str, tuple[dict[str, Any], str], Identity]:
    """The world's cartridge copied to ``{name}-hostile`` (anyone pushes there): (source, hostile, tag, the
    hostile copy's genuine list and its manifest digest, a fresh stranger's did:key identity)."""
    src, hostile = f"{w.registry}/{w.repo}:1.0.0", f"{w.registry}/{name}-hostile/strong"
    ok(cli("copy", src, hostile, "--quiet"))
    url = json.loads((w.tmp / "att" / "credential.json").read_text())["credentialStatus"]["statusListCredential"]
    real = fetch_status_list(open_store(hostile), url)
    assert real is not None
    stranger = Identity(Ed25519PrivateKey.generate(), "did:key:placeholder")
    return src, hostile, status_tag(url), real, Identity(stranger.private, stranger.did_key)


def test_a_forged_list_planted_in_an_empty_mirror_does_not_block_the_issuers_list(world: World) -> None:
    """A first copy from a hostile source plants its list unchecked (nothing to replace). That list's forged sequence
    then made every later copy of the issuer's genuine list keep it ("the destination's is newer"): the rollback
    guard trusted an unverified destination list, so one hostile copy bricked the mirror's status for good. A
    destination list whose proof fails against its issuer's known keys no longer outranks a verified one."""
    w = world
    mirror = f"{w.registry}/plant-mirror/strong"
    src, hostile, tag, real, stranger = _hostile_copy(w, "plant")
    publish_status_list(open_store(hostile), _forge(real[0], stranger, w.verifier_did, f"{w.verifier_did}#key-1"))
    ok(cli("copy", f"{hostile}:1.0.0", mirror, "--quiet"))  # the empty mirror takes it: nothing to compare with
    planted = open_store(mirror).resolve(tag).digest
    assert planted != real[1]
    genuine = ok(cli("copy", src, mirror, "--json", "--trust", str(w.trust)))
    assert genuine["statusLists"] == [tag], genuine
    assert open_store(mirror).resolve(tag).digest == real[1]
    assert ok(cli("resolve", f"{mirror}:1.0.0", "--trust", w.trust, "--json"))["capabilities"][0]["effective"] \
        == "VERIFIED"
    # without --trust the mirror's list cannot be judged (a did:web issuer): kept, as before, never silently replaced
    publish_status_list(open_store(mirror), _forge(real[0], stranger, w.verifier_did, f"{w.verifier_did}#key-1"))
    kept = ok(cli("copy", src, mirror, "--json"))
    assert kept["statusLists"] == [] and any("destination's is newer" in n for n in kept["notes"]), kept


def test_a_list_of_another_issuer_at_the_credentials_place_is_never_copied_and_never_kept(world: World) -> None:
    """Issue 42.3: the place ``acx-status-<uuid>`` belongs to the issuer of the credentials naming it. A stranger's
    own list there (its own DID, a sound proof) is not copied into an empty mirror, and one planted in a mirror is
    replaced by the issuer's (before: copied, then kept as "signed by someone else", and the mirror failed closed)."""
    w = world
    mirror = f"{w.registry}/owner-mirror/strong"
    src, hostile, tag, real, stranger = _hostile_copy(w, "owner")
    url = real[0]["id"]
    planted = _forge(real[0], stranger, stranger.did, stranger.verification_method)
    publish_status_list(open_store(hostile), planted)
    out = ok(cli("copy", f"{hostile}:1.0.0", mirror, "--json", "--trust", str(w.trust)))
    assert out["statusLists"] == [] and any("a planted list, not copied" in n for n in out["notes"]), out
    assert fetch_status_list(open_store(mirror), url) is None
    publish_status_list(open_store(mirror), planted)  # planted in the mirror itself
    genuine = ok(cli("copy", src, mirror, "--json", "--trust", str(w.trust)))
    assert genuine["statusLists"] == [tag], genuine
    assert open_store(mirror).resolve(tag).digest == real[1]
    assert ok(cli("resolve", f"{mirror}:1.0.0", "--trust", w.trust, "--json"))["capabilities"][0]["effective"] \
        == "VERIFIED"


def test_without_trust_a_strangers_credential_never_takes_the_verifiers_place(world: World, tmp_path: Path) -> None:
    """Attack review of 42.3: without --trust the verifier's did:web credential cannot be checked; a stranger's
    self-issued credential naming its list made the stranger the only owner, and the genuine list was dropped."""
    w = world
    src = f"{w.registry}/{w.repo}:1.0.0"
    hostile, mirror = f"{w.registry}/own-hostile/x", f"{w.registry}/own-mirror/x"
    ok(cli("copy", src, hostile, "--quiet"))
    cred = json.loads((w.tmp / "att" / "credential.json").read_text())
    url = cred["credentialStatus"]["statusListCredential"]
    stranger = Identity(Ed25519PrivateKey.generate(), "did:key:placeholder")
    stranger = Identity(stranger.private, stranger.did_key)
    mine = dataintegrity.without_proof(copy.deepcopy(cred))
    mine["issuer"] = stranger.did
    signed = sign_credential(mine, stranger, stranger.verification_method, str(mine["validFrom"]))
    store = open_store(f"{hostile}:1.0.0")
    push_attestation(store, store.resolve("1.0.0"), json.dumps(signed).encode(), [])
    out = ok(cli("copy", f"{hostile}:1.0.0", mirror, "--json"))
    assert status_tag(url) in out["statusLists"], out["notes"]
    assert fetch_status_list(open_store(mirror), url) is not None
