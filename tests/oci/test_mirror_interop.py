"""Mirrors made with the tools people already use, on a real CNCF Distribution registry.

``skopeo copy --all`` of the cartridge, its ``sha256-<hex>`` referrers index and the status tag drops
``artifactType`` from the index's descriptors: ``resolve`` still says VERIFIED (classifying the referrer by
its manifest, and saying so), ``referrers repair`` puts ``artifactType`` and the annotations back, and
``resolve`` then needs no classification. ``oras cp -r`` (the ORAS CLI, fetched from Debian trixie when not
installed) keeps ``artifactType``: VERIFIED before and after a repair that has nothing to restore.
``acx-oci copy`` from the stripped mirror writes a full index again.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from acx_oci.oci import fallback_tag, open_store
from acx_oci.services.artifacts import MEDIA_BUNDLE, status_tag

from ..support.cli import cli, ok
from ..support.oras_cli import oras, oras_binary
from ..support.resolve_world import World, build_resolve_world

ATTESTATION = "application/vnd.acx.level-attestation.v1"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, registry: str) -> World:
    return build_resolve_world(tmp_path_factory.mktemp("interop"), registry)


def _tags(w: World) -> list[str]:
    cred = json.loads((w.tmp / "att" / "credential.json").read_text())
    status = status_tag(cred["credentialStatus"]["statusListCredential"])
    return ["1.0.0", fallback_tag(w.cart["manifestDigest"]), status]


def _resolve(w: World, ref: str, *extra: str) -> dict[str, Any]:
    doc: dict[str, Any] = ok(cli("resolve", ref, "--trust", w.trust, "--json", *extra))
    return doc


def _index(w: World, repo: str) -> list[dict[str, Any]]:
    raw, _, _ = open_store(f"{w.registry}/{repo}").fetch_manifest_raw(fallback_tag(w.cart["manifestDigest"]))
    entries: list[dict[str, Any]] = json.loads(raw)["manifests"]
    return entries


def test_skopeo_copy_all_verified_before_and_after_repair(world: World) -> None:
    w = world
    repo = "skopeo/strong"
    for tag in _tags(w):
        subprocess.run(["skopeo", "copy", "--all", "--src-tls-verify=false", "--dest-tls-verify=false",
                        f"docker://{w.registry}/{w.repo}:{tag}", f"docker://{w.registry}/{repo}:{tag}"],
                       check=True, capture_output=True)
    att = w.attest_out["attestationDigest"]
    stripped = next(e for e in _index(w, repo) if e["digest"] == att)
    assert "artifactType" not in stripped  # the premise: skopeo dropped it

    ref = f"{w.registry}/{repo}:1.0.0"
    before = _resolve(w, ref)
    cap = before["capabilities"][0]
    assert cap["effective"] == "VERIFIED" and cap["attestationDigest"] == att, before
    assert before["classifiedByManifest"] == 2  # the attestation and its cosign 3 bundle
    assert any("classified by fetching their manifests" in n for n in before["notes"]), before["notes"]
    human = ok(cli("resolve", ref, "--trust", w.trust))
    assert "SIMULATED tier=" in human and "classified by fetching their manifests" in human

    repaired = ok(cli("referrers", "repair", ref, "--json"))
    assert att in repaired["classifiedByManifest"] and len(repaired["classifiedByManifest"]) == 2  # + the bundle
    assert repaired["added"] == [] and repaired["removed"] == []
    fixed = next(e for e in _index(w, repo) if e["digest"] == att)
    assert fixed["artifactType"] == ATTESTATION
    assert fixed["annotations"]["dev.acx.level.career-tier"] == w.attest_out["careerTier"]

    after = _resolve(w, ref)
    assert after["capabilities"][0]["effective"] == "VERIFIED" and after["classifiedByManifest"] == 0
    assert after["capabilities"] == before["capabilities"]
    again = ok(cli("referrers", "repair", ref, "--json"))
    assert again["classifiedByManifest"] == [] and again["before"] == again["after"] == 2
    text = ok(cli("referrers", "repair", ref))
    assert "classified by manifest" not in text


def test_acx_copy_from_a_stripped_mirror_writes_a_full_index(world: World, tmp_path: Path) -> None:
    w = world
    repo, dest = "stripped/strong", "restored/strong"
    for tag in _tags(w):
        subprocess.run(["skopeo", "copy", "--all", "--src-tls-verify=false", "--dest-tls-verify=false",
                        f"docker://{w.registry}/{w.repo}:{tag}", f"docker://{w.registry}/{repo}:{tag}"],
                       check=True, capture_output=True)
    out = ok(cli("copy", f"{w.registry}/{repo}:1.0.0", f"{w.registry}/{dest}", "--trust", w.trust, "--json"))
    assert out["destinationResolvesSame"] is True and len(out["statusLists"]) == 1
    entry = next(e for e in _index(w, dest) if e["digest"] == w.attest_out["attestationDigest"])
    assert entry["artifactType"] == ATTESTATION
    assert _resolve(w, f"{w.registry}/{dest}:1.0.0")["classifiedByManifest"] == 0


def test_oras_cp_r_verified_before_and_after_repair(world: World, tmp_path: Path) -> None:
    w = world
    binary = oras_binary()
    repo = "oras/strong"
    home = tmp_path / "home"
    home.mkdir()
    src, dst = f"{w.registry}/{w.repo}", f"{w.registry}/{repo}"
    oras(binary, home, "cp", "-r", "--from-plain-http", "--to-plain-http", f"{src}:1.0.0", f"{dst}:1.0.0")
    status = _tags(w)[2]
    # oras cp -r leaves the status list behind: without it, a consumer that never kept the list fails closed
    missing = _resolve(w, f"{dst}:1.0.0", "--status-cache", str(tmp_path / "first-time"))["capabilities"][0]
    assert missing["effective"] == "unproven" and "status_unknown" in str(missing["rejected"]), missing
    oras(binary, home, "cp", "--from-plain-http", "--to-plain-http", f"{src}:{status}", f"{dst}:{status}")

    ref = f"{dst}:1.0.0"
    before = _resolve(w, ref)
    assert before["capabilities"][0]["effective"] == "VERIFIED", before
    assert before["capabilities"][0]["attestationDigest"] == w.attest_out["attestationDigest"]
    repaired = ok(cli("referrers", "repair", ref, "--json"))
    assert repaired["classifiedByManifest"] == [] and repaired["removed"] == []
    after = _resolve(w, ref)
    assert after["capabilities"] == before["capabilities"] and after["classifiedByManifest"] == 0
    # ORAS wrote the index itself, with artifactType: nothing needed classifying
    entry = next(e for e in _index(w, repo) if e["digest"] == w.attest_out["attestationDigest"])
    assert entry["artifactType"] == ATTESTATION


def test_oras_reads_our_bundle_and_we_read_oras_layouts(world: World, tmp_path: Path) -> None:
    """``acx-oci copy``'s air-gap bundle is an ordinary OCI layout to ORAS, and a layout ORAS wrote
    (``oras cp -r --to-oci-layout`` plus the status tag) resolves like the source."""
    w = world
    binary = oras_binary()
    home = tmp_path / "home"
    home.mkdir()
    src = f"{w.registry}/{w.repo}"
    bundle = tmp_path / "bundle"
    # with --trust the level is known to stand, so its cosign projection travels too
    ok(cli("copy", f"{src}:1.0.0", f"oci:{bundle}", "--trust", w.trust, "--quiet"))
    found = json.loads(oras(binary, home, "discover", "--oci-layout", f"{bundle}:1.0.0", "--format", "json"))
    listed = {m["digest"]: m.get("artifactType") for m in found["manifests"]}
    # the attestation, and its cosign 3 projection (a Sigstore bundle) beside it
    assert {d: t for d, t in listed.items() if t != MEDIA_BUNDLE} == {w.attest_out["attestationDigest"]: ATTESTATION}
    assert sorted(listed.values()).count(MEDIA_BUNDLE) == 1

    layout = tmp_path / "oras-layout"
    status = _tags(w)[2]
    oras(binary, home, "cp", "-r", "--from-plain-http", "--to-oci-layout", f"{src}:1.0.0", f"{layout}:1.0.0")
    oras(binary, home, "cp", "--from-plain-http", "--to-oci-layout", f"{src}:{status}", f"{layout}:{status}")
    theirs = _resolve(w, f"oci:{layout}:1.0.0")
    source = _resolve(w, f"{src}:1.0.0")
    assert theirs["capabilities"] == source["capabilities"] and theirs["capabilities"][0]["effective"] == "VERIFIED"
