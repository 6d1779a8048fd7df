"""``acx-oci copy`` carries the cosign projection (cosign 2.5's ``.att``/``.sig`` tags, cosign 3's Sigstore
bundle referrer) byte for byte, but only of levels that stand: the real cosign 3 and 2.5 verify the mirror,
and after ``acx-oci revoke`` neither a fresh mirror, nor the old mirror copied again, nor a mirror of a source
whose takedown failed (the stale projection pushed back) lets cosign pass. One attested cartridge on
Distribution (no Referrers API: the bundle is found through the tag-schema index), and, slow, on ggcr's registry
(the Referrers API); the tests run in order."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acx_oci.oci import open_store, parse_reference
from acx_oci.reasons import PROJECTION_NOT_STANDING
from acx_oci.services.artifacts import MEDIA_BUNDLE, PREDICATE_LEVEL, cosign_tag

from ..support.cli import cli, ok
from ..support.cosign_cli import cosign, cosign3, cosign3_binary, cosign_binary
from ..support.resolve_world import World, build_resolve_world

TRUSTED_ROOT = {"mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1"}


@pytest.fixture(scope="module", params=["distribution", pytest.param("ggcr", marks=pytest.mark.slow)])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The resolve world (one level attested, projected in both layouts), the PEM keys and an empty root;
    ``saved`` keeps the source's projection (raw manifests) as it was before any revoke. Slow: the same on
    ggcr's registry (the Referrers API: a stale bundle at the destination is deleted, not just unlisted)."""
    cosign_binary()
    cosign3_binary()
    registry = str(request.getfixturevalue("registry" if request.param == "distribution" else "ggcr"))
    w = build_resolve_world(tmp_path_factory.mktemp("copycos"), registry)
    ok(cli("keys", "export-pem", str(w.verifier), "-o", str(w.tmp / "verifier.pub")))
    ok(cli("keys", "export-pem", str(w.publisher), "-o", str(w.tmp / "publisher.pub")))
    (w.tmp / "root.json").write_text(json.dumps(TRUSTED_ROOT))
    src = f"{registry}/{w.repo}"
    with open_store(parse_reference(f"{src}:1.0.0")) as store:
        digest = store.resolve("1.0.0").digest
        bundles = [d.digest for d in store.referrers(digest, MEDIA_BUNDLE).descriptors]
        assert len(bundles) == 1
        saved = {"bundle": store.fetch_manifest_raw(bundles[0]),
                 "att": store.fetch_manifest_raw(cosign_tag(digest, "att"))}
    return {"w": w, "src": src, "digest": digest, "saved": saved}


def _cosign3(w: World, ref: str) -> Any:
    """The cosign 3 command of tests/oci/test_cosign3_interop.py (and docs/operations.md)."""
    return cosign3("verify-attestation", "--key", str(w.tmp / "verifier.pub"), "--type", PREDICATE_LEVEL,
                   "--trusted-root", str(w.tmp / "root.json"), "--insecure-ignore-tlog", "--allow-http-registry", ref)


def _cosign25(w: World, ref: str) -> Any:
    return cosign("verify-attestation", "--key", str(w.tmp / "verifier.pub"), "--type", PREDICATE_LEVEL, ref)


def _copy(world: dict[str, Any], src: str, repo: str, *trust: str) -> dict[str, Any]:
    w: World = world["w"]
    out: dict[str, Any] = ok(cli("copy", f"{src}:1.0.0", f"{w.registry}/{repo}", *trust, "--json"))
    assert out["subject"] == world["digest"]
    return out


def _raw(ref: str, target: str) -> bytes:
    with open_store(parse_reference(ref)) as store:
        return store.fetch_manifest_raw(target)[0]


def test_the_mirror_carries_the_projection_exactly_and_cosign_verifies_it(world: dict[str, Any]) -> None:
    w, digest = world["w"], world["digest"]
    out = _copy(world, world["src"], "mirror/cos-a", "--trust", str(w.trust))
    mirror = f"{w.registry}/mirror/cos-a"
    assert out["skipped"] == [] and MEDIA_BUNDLE in [r["artifactType"] for r in out["referrers"]]
    for tag in (cosign_tag(digest, "att"), cosign_tag(digest, "sig")):  # same bytes, so same digests
        assert _raw(mirror, tag) == _raw(world["src"], tag)
    assert _raw(mirror, world["saved"]["bundle"][2]) == world["saved"]["bundle"][0]
    proc = _cosign3(w, f"{mirror}@{digest}")
    assert proc.returncode == 0, proc.stderr
    assert _cosign25(w, f"{mirror}@{digest}").returncode == 0
    assert cosign("verify", "--key", str(w.tmp / "publisher.pub"), "--insecure-ignore-tlog",
                  f"{mirror}@{digest}").returncode == 0


def test_without_trust_no_level_projection_is_carried(world: dict[str, Any]) -> None:
    """Nothing says whether the level stands: fail closed (the publisher's signature still goes along)."""
    w, digest = world["w"], world["digest"]
    out = _copy(world, world["src"], "mirror/cos-untrusted")
    mirror = f"{w.registry}/mirror/cos-untrusted"
    codes = {(s["artifactType"], s["code"]) for s in out["skipped"]}
    assert codes == {(MEDIA_BUNDLE, PROJECTION_NOT_STANDING), ("application/vnd.dsse.envelope.v1+json",
                                                               PROJECTION_NOT_STANDING)}, out["skipped"]
    assert _cosign3(w, f"{mirror}@{digest}").returncode != 0
    assert _cosign25(w, f"{mirror}@{digest}").returncode != 0
    assert _raw(mirror, cosign_tag(digest, "sig")) == _raw(world["src"], cosign_tag(digest, "sig"))


def test_after_revoke_no_mirror_lets_cosign_pass(world: dict[str, Any]) -> None:
    """Revoked: a fresh mirror, the old mirror copied again (its stale projection taken down), and a mirror of a
    source whose takedown failed (the old bundle and ``.att`` pushed back) all refuse."""
    w, digest, src = world["w"], world["digest"], world["src"]
    credential = json.loads((w.tmp / "att" / "credential.json").read_text())
    ok(cli("revoke", credential["id"], "--key", str(w.verifier), "--state", str(w.tmp / "state"), "--json"))
    fresh = _copy(world, src, "mirror/cos-fresh", "--trust", str(w.trust))
    assert fresh["verified"]["capabilities"][0]["effective"] != "VERIFIED"
    assert _cosign3(w, f"{w.registry}/mirror/cos-fresh@{digest}").returncode != 0
    again = _copy(world, src, "mirror/cos-a", "--trust", str(w.trust))
    assert any("taken down" in n for n in again["notes"]), again["notes"]
    assert _cosign3(w, f"{w.registry}/mirror/cos-a@{digest}").returncode != 0
    assert _cosign25(w, f"{w.registry}/mirror/cos-a@{digest}").returncode != 0
    with open_store(parse_reference(f"{src}:1.0.0")) as store:  # the takedown "failed": the projection is back
        store.push_referrer(world["saved"]["bundle"][0], digest)
        store.push_manifest(world["saved"]["att"][0], world["saved"]["att"][1], cosign_tag(digest, "att"))
    assert _cosign3(w, f"{src}@{digest}").returncode == 0  # the source itself is stale now
    stale = _copy(world, src, "mirror/cos-stale", "--trust", str(w.trust))
    assert [s["code"] for s in stale["skipped"]] == [PROJECTION_NOT_STANDING] * 2, stale["skipped"]
    assert _cosign3(w, f"{w.registry}/mirror/cos-stale@{digest}").returncode != 0
    assert _cosign25(w, f"{w.registry}/mirror/cos-stale@{digest}").returncode != 0


def _wrapped(payload: str) -> str:
    return "\n".join(payload[i:i + 76] for i in range(0, len(payload), 76)) + "\n"


def _urlsafe(payload: str) -> str:
    return payload.replace("+", "-").replace("/", "_")  # (padding kept: Go's URLEncoding requires it)


def _envelope_variant(env: dict[str, Any], how: str) -> dict[str, Any]:
    """The same signed envelope (the signature covers the decoded payload) as Go still reads it."""
    if how == "wrapped":
        return {**env, "payload": _wrapped(env["payload"])}
    return {**env, "payload": _urlsafe(env["payload"])}


@pytest.mark.parametrize("how", ["wrapped", "urlsafe", "proto-name"])
def test_a_revoked_level_re_encoded_and_put_back_never_verifies_on_a_mirror(world: dict[str, Any], how: str) -> None:
    """After the revoke above, the publisher puts the genuine projection back re-encoded so that a strict parse
    cannot read it, and without the predicate annotations: cosign still verifies it at the source, never on a
    mirror made with --trust (before: carried byte for byte, and cosign 2.5 passed on the mirror)."""
    from acx_oci.oci import Descriptor
    from acx_oci.services.artifacts import push_projection_layers

    w, digest, src = world["w"], world["digest"], world["src"]
    att_manifest = json.loads(world["saved"]["att"][0])
    bundle_manifest = json.loads(world["saved"]["bundle"][0])
    with open_store(parse_reference(f"{src}:1.0.0")) as store:
        layer = att_manifest["layers"][0]
        if how != "proto-name":  # cosign 2.5's .att: the envelope's payload as Go's base64 reads it
            env = json.loads(store.fetch_blob(layer["digest"]))
            raw = json.dumps(_envelope_variant(env, how)).encode()
            kept = {k: v for k, v in (layer.get("annotations") or {}).items() if k != "predicateType"}
            push_projection_layers(store, digest, [(raw, Descriptor.for_bytes(layer["mediaType"], raw, kept))])
            assert _cosign25(w, f"{src}@{digest}").returncode == 0  # the re-encoded projection is one cosign takes
        blayer = bundle_manifest["layers"][0]
        bundle = json.loads(store.fetch_blob(blayer["digest"]))
        if how == "proto-name":  # protojson also takes the proto field's own name
            bundle["dsse_envelope"] = bundle.pop("dsseEnvelope")
        else:
            bundle["dsseEnvelope"] = _envelope_variant(bundle["dsseEnvelope"], how)
        braw = json.dumps(bundle).encode()
        blob = store.push_blob(braw, blayer["mediaType"])
        bundle_manifest["layers"] = [{"mediaType": blayer["mediaType"], "digest": blob.digest, "size": blob.size}]
        bundle_manifest.pop("annotations", None)
        store.push_referrer(json.dumps(bundle_manifest).encode(), digest)
    out = _copy(world, src, f"mirror/cos-{how}", "--trust", str(w.trust))
    assert PROJECTION_NOT_STANDING in [s["code"] for s in out["skipped"]], out["skipped"]
    assert _cosign25(w, f"{w.registry}/mirror/cos-{how}@{digest}").returncode != 0
    assert _cosign3(w, f"{w.registry}/mirror/cos-{how}@{digest}").returncode != 0


@pytest.mark.parametrize("retype", ["application/vnd.example.not-a-bundle",
                                    "application/vnd.dev.sigstore.bundle+json;version=0.3", None])
def test_a_revoked_bundle_put_back_under_another_artifact_type_is_judged_all_the_same(
        world: dict[str, Any], retype: str | None) -> None:
    """cosign 3 lists every referrer and reads any manifest with a sigstore bundle layer as a bundle (attack
    review of 42.1): the genuine bundle of the level revoked above, put back under another artifactType or none,
    was carried unjudged and verified on the mirror."""
    w, digest, src = world["w"], world["digest"], world["src"]
    manifest = json.loads(world["saved"]["bundle"][0])
    if retype is None:  # no artifactType: classified by the config media type
        manifest.pop("artifactType")
        manifest["config"].pop("artifactType", None)
        manifest["config"] = {"mediaType": "application/vnd.oci.image.config.v1+json",
                              "digest": manifest["config"]["digest"], "size": manifest["config"]["size"]}
    else:
        manifest["artifactType"] = retype
    manifest.pop("annotations", None)
    with open_store(parse_reference(f"{src}:1.0.0")) as store:
        pushed = store.push_referrer(json.dumps(manifest).encode(), digest).digest
    assert _cosign3(w, f"{src}@{digest}").returncode == 0  # cosign 3 takes it at the source
    name = f"mirror/retyped-{abs(hash(retype)) % 10000}"
    out = _copy(world, src, name, "--trust", str(w.trust))
    carried = [r["digest"] for r in out["referrers"]]
    assert pushed not in carried, f"the revoked bundle under artifactType {retype} was carried unjudged"
    proc = _cosign3(w, f"{w.registry}/{name}@{digest}")
    assert proc.returncode != 0, ("revoked level verifies in cosign 3 on the mirror", out["referrers"], out["skipped"])
