"""``acx-oci copy`` on a real CNCF Distribution registry (no Referrers API: tag-schema fallback) and, slow,
on go-containerregistry's (Referrers API; its listing types acx referrers by their config media type).

Registry -> ``oci:`` layout -> a second repository, and Distribution -> layout -> the ggcr registry: every
copy resolves exactly as the source (ignoring the reference, and on ggcr the classification it forces), the
layout resolves with the network off (``unshare -n``), digests and status tags survive, and
``--only-verified`` leaves a rejected attestation behind.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acx_oci.oci import Descriptor, fallback_tag, open_store
from acx_oci.services.artifacts import status_tag

from ..support.cli import cli, ok
from ..support.env import ROOT
from ..support.resolve_world import World, build_resolve_world, push_self_issued


@pytest.fixture(scope="module", params=["distribution", pytest.param("ggcr", marks=pytest.mark.slow)])
def world(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> World:
    registry = request.getfixturevalue("registry" if request.param == "distribution" else "ggcr")
    w = build_resolve_world(tmp_path_factory.mktemp(f"copy-{request.param}"), registry)
    return dataclasses.replace(w, kind=request.param)


def _without_classification(doc: dict[str, Any]) -> dict[str, Any]:
    """go-containerregistry lists every acx referrer with its config media type as artifactType, so resolving
    there classifies by manifest and says so; everything else must match."""
    out = {k: v for k, v in doc.items() if k not in ("classifiedByManifest", "notes")}
    out["notes"] = [n for n in doc["notes"] if "classified by fetching their manifests" not in n]
    return out


def same(w: World, a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal resolve JSON; across ggcr and a layout, equal but for the classification ggcr forces."""
    return a == b if w.kind == "distribution" else _without_classification(a) == _without_classification(b)


def resolved(w: World, ref: str) -> dict[str, Any]:
    doc: dict[str, Any] = ok(cli("resolve", ref, "--trust", str(w.trust), "--json"))
    doc.pop("reference")
    doc.pop("phases")  # timings differ from run to run
    return doc


def _status_url(w: World) -> str:
    cred = json.loads((w.tmp / "att" / "credential.json").read_text())
    url: str = cred["credentialStatus"]["statusListCredential"]
    return url


def _unshare() -> list[str] | None:
    for argv in (["unshare", "-n"], ["unshare", "-rn"]):
        if shutil.which("unshare") and subprocess.run([*argv, "true"], capture_output=True).returncode == 0:
            return argv
    return None


def test_registry_to_layout_to_registry_resolves_the_same(world: World, tmp_path: Path) -> None:
    w = world
    src = f"{w.registry}/{w.repo}:1.0.0"
    layout = tmp_path / "bundle"
    mirror = f"{w.registry}/mirror/strong"
    before = resolved(w, src)
    assert before["capabilities"][0]["effective"] == "VERIFIED"

    out = ok(cli("copy", src, f"oci:{layout}", "--trust", w.trust, "--json"))
    assert out["subject"] == w.cart["manifestDigest"] and out["destinationResolvesSame"] is True
    assert w.attest_out["attestationDigest"] in [r["digest"] for r in out["referrers"]]
    tag = status_tag(_status_url(w))
    assert out["statusLists"] == [tag] and out["skipped"] == []
    assert out["blobsCopied"] == out["blobs"] > 3 and out["bytesCopied"] == out["bytesTotal"]
    assert same(w, resolved(w, f"oci:{layout}:1.0.0"), before)

    back = ok(cli("copy", f"oci:{layout}:1.0.0", mirror, "--trust", w.trust, "--json"))
    assert back["subject"] == w.cart["manifestDigest"] and back["destinationResolvesSame"] is True
    assert resolved(w, f"{mirror}:1.0.0") == before

    # exact bytes: the cartridge, the attestation and the status list keep their digests
    src_store, dst_store = open_store(src), open_store(f"{mirror}:1.0.0")
    for target in ("1.0.0", w.attest_out["attestationDigest"], tag):
        assert src_store.fetch_manifest_raw(target)[0] == dst_store.fetch_manifest_raw(target)[0]
    if w.kind == "distribution":  # the mirror has the tag-schema index with full descriptors
        index = dst_store.read_referrers_index(w.cart["manifestDigest"])  # type: ignore[attr-defined]
        entry = next(d for d in index if d.digest == w.attest_out["attestationDigest"])
        assert entry.artifact_type == "application/vnd.acx.level-attestation.v1"
        assert entry.annotations["dev.acx.level.career-tier"] == w.attest_out["careerTier"]
    else:  # the registry indexes referrers itself: no tag-schema index is written
        assert fallback_tag(w.cart["manifestDigest"]) not in dst_store.list_tags()
        assert dst_store.referrers(w.cart["manifestDigest"]).source == "api"

    # a second copy finds everything already there
    again = ok(cli("copy", src, mirror, "--json"))
    assert again["blobsCopied"] == 0 and again["bytesCopied"] == 0 and again["destinationResolvesSame"] is None

    # the air-gap bundle resolves with no network at all
    unshare = _unshare()
    if unshare is None:
        pytest.skip("unshare -n is not permitted here")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([*unshare, sys.executable, "-m", "acx_oci", "resolve", f"oci:{layout}:1.0.0",
                           "--trust", str(w.trust), "--json"], capture_output=True, env=env, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr.decode()
    offline = json.loads(proc.stdout)
    offline.pop("reference")
    offline.pop("phases")
    assert same(w, offline, before)
    # and really offline: the registry is unreachable from inside the namespace
    proc = subprocess.run([*unshare, sys.executable, "-m", "acx_oci", "resolve", src, "--trust", str(w.trust)],
                          capture_output=True, env=env, cwd=str(ROOT))
    assert proc.returncode == 3, proc.stderr.decode()


def test_only_verified_leaves_rejected_attestations_behind(world: World, tmp_path: Path) -> None:
    w = world
    repo = "acx/mixed"
    # the same cartridge in another repository, plus a credential its publisher issued to itself
    ok(cli("copy", f"{w.registry}/{w.repo}:1.0.0", f"{w.registry}/{repo}:1.0.0", "--trust", w.trust))
    bad = push_self_issued(w, repo)
    before = resolved(w, f"{w.registry}/{repo}:1.0.0")
    assert bad in [r["digest"] for r in before["capabilities"][0]["rejected"]]

    layout = tmp_path / "verified"
    out = ok(cli("copy", f"{w.registry}/{repo}:1.0.0", f"oci:{layout}", "--trust", w.trust, "--only-verified",
                 "--json"))
    assert [s["digest"] for s in out["skipped"]] == [bad] and "issuer_untrusted" in out["skipped"][0]["reason"]
    copied = [r["digest"] for r in out["referrers"]]
    assert w.attest_out["attestationDigest"] in copied and bad not in copied
    assert out["destinationResolvesSame"] is True
    after = resolved(w, f"oci:{layout}:1.0.0")
    assert after["capabilities"][0]["effective"] == "VERIFIED"
    assert after["capabilities"][0]["rejected"] == [] and after["referrersSeen"] == before["referrersSeen"] - 1
    # without --only-verified every attestation goes, the rejected one included (without --trust no cosign
    # projection of a level does: whether its level stands is unknown)
    full = ok(cli("copy", f"{w.registry}/{repo}:1.0.0", f"oci:{tmp_path / 'all'}", "--json"))
    assert bad in [r["digest"] for r in full["referrers"]]
    assert {s["code"] for s in full["skipped"]} == {"projection_not_standing"}, full["skipped"]


def test_copy_usage_errors(world: World, tmp_path: Path) -> None:
    w = world
    src = f"{w.registry}/{w.repo}:1.0.0"
    res = cli("copy", src, f"oci:{tmp_path / 'x'}", "--only-verified")
    assert res.exit_code == 2 and "--only-verified needs --trust" in res.output
    res = cli("copy", src, f"{w.registry}/elsewhere@{w.cart['manifestDigest']}")
    assert res.exit_code == 2 and "not a digest" in res.output
    res = cli("copy", f"{w.registry}/{w.repo}:no-such-tag", f"oci:{tmp_path / 'y'}")
    assert res.exit_code == 2, res.output


def test_a_corrupt_blob_stops_the_copy_before_any_manifest(world: World, tmp_path: Path) -> None:
    w = world
    layout = tmp_path / "bundle"
    ok(cli("copy", f"{w.registry}/{w.repo}:1.0.0", f"oci:{layout}", "--quiet"))
    game = next(p for p in (layout / "blobs" / "sha256").iterdir()
                if p.read_bytes().startswith(b"{") and b"payloadType" in p.read_bytes())
    game.write_bytes(game.read_bytes().replace(b"payload", b"PAYLOAD", 1))
    dest = f"oci:{tmp_path / 'dest'}"  # a fresh layout: a registry may share blobs across repositories
    res = cli("copy", f"oci:{layout}:1.0.0", dest)
    assert res.exit_code == 1 and "digest mismatch" in res.output, res.output
    assert open_store(dest).list_tags() == []  # blobs go first: no manifest, no tag, no half-made mirror


def test_progress_reports_every_byte_and_same_registry_copies_mount(world: World, tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from acx_oci.services.consumer import CopyRequest, copy_artifact
    from acx_oci.trust import load_trust

    w = world
    events: list[tuple[int, int, str]] = []
    out = copy_artifact(CopyRequest(f"{w.registry}/{w.repo}:1.0.0", f"{w.registry}/mounted/strong",
                                    datetime.now(UTC), trust=load_trust(w.trust),
                                    progress=lambda d, t, s: events.append((d, t, s))))
    assert out.destination_same is True
    if w.kind == "distribution":  # ggcr's in-memory registry answers a mount with an upload session
        assert out.blobs_mounted == out.blobs and out.blobs_copied == 0 and out.bytes_copied == 0
    byte_events = [e for e in events if e[1] > 0]
    assert byte_events[-1][0] == byte_events[-1][1] == out.bytes_total > 0
    done = [d for d, _, s in byte_events if s.startswith("blob ")]
    assert done == sorted(done) and len(done) == out.blobs
    assert any(s.startswith("planning") for _, _, s in events)


def test_any_referrer_chain_and_image_index_copy_between_layouts_and_registry(registry: str, tmp_path: Path) -> None:
    """Non-acx referrers (a signature on a signature), and an image index with its children, all keep their
    digests; a registry destination gets the tag-schema index with each referrer's artifactType."""
    from acx_oci.oci import MEDIA_INDEX, MEDIA_MANIFEST, build_index, build_manifest

    src = open_store(f"oci:{tmp_path / 'src'}")
    layer = src.push_blob(b"payload", "application/octet-stream")
    subject = src.push_manifest(build_manifest("application/vnd.example.thing", [layer]), MEDIA_MANIFEST, "v1")
    sig_layer = src.push_blob(b"sig-1", "application/octet-stream")
    sig = src.push_referrer(build_manifest("application/vnd.example.sig", [sig_layer], subject=subject,
                                           annotations={"who": "a"}), subject.digest)
    countersig = src.push_referrer(build_manifest("application/vnd.example.sig", [src.push_blob(
        b"sig-2", "application/octet-stream")], subject=Descriptor(MEDIA_MANIFEST, sig.digest, sig.size)),
        sig.digest)
    other = src.push_manifest(build_manifest("application/vnd.example.thing", [sig_layer]), MEDIA_MANIFEST)
    index = src.push_manifest(build_index([subject, other]), MEDIA_INDEX, "multi")

    out = ok(cli("copy", f"oci:{tmp_path / 'src'}:v1", f"oci:{tmp_path / 'dst'}", "--json"))
    assert {r["digest"] for r in out["referrers"]} == {sig.digest, countersig.digest}
    assert out["statusLists"] == [] and out["verified"] is None
    dst = open_store(f"oci:{tmp_path / 'dst'}")
    assert [d.digest for d in dst.referrers(sig.digest).descriptors] == [countersig.digest]

    reg = f"{registry}/generic/thing"
    ok(cli("copy", f"oci:{tmp_path / 'dst'}:v1", reg, "--quiet"))
    store = open_store(f"{reg}:v1")
    entries = store.read_referrers_index(subject.digest)  # type: ignore[attr-defined]
    assert [(d.digest, d.artifact_type, d.annotations.get("who")) for d in entries] == \
        [(sig.digest, "application/vnd.example.sig", "a")]
    assert [d.digest for d in store.referrers(sig.digest).descriptors] == [countersig.digest]
    assert not any(t.startswith("acx-att-") for t in store.list_tags())  # own tags only for acx artifacts

    multi = ok(cli("copy", f"oci:{tmp_path / 'src'}:multi", f"{reg}:multi", "--json"))
    assert multi["subject"] == index.digest and multi["manifests"] >= 3
    assert store.fetch_manifest_raw("multi")[0] == src.fetch_manifest_raw("multi")[0]
    assert store.fetch_manifest_raw(other.digest)[0] == src.fetch_manifest_raw(other.digest)[0]
    # --trust on something that is not a cartridge: copied, said so, nothing resolved
    (tmp_path / "trust.yaml").write_text("publishers: []\n")
    noted = ok(cli("copy", f"oci:{tmp_path / 'src'}:v1", f"oci:{tmp_path / 'x'}", "--trust",
                   tmp_path / "trust.yaml", "--json"))
    assert any("not a cartridge" in n for n in noted["notes"]) and noted["verified"] is None


def test_bogus_index_entries_are_noted_not_copied(registry: str, tmp_path: Path) -> None:
    from acx_oci.oci import MEDIA_MANIFEST, build_manifest

    src = open_store(f"{registry}/bogus/thing")
    layer = src.push_blob(b"payload", "application/octet-stream")
    subject = src.push_manifest(build_manifest("application/vnd.example.thing", [layer]), MEDIA_MANIFEST, "v1")
    elsewhere = src.push_manifest(build_manifest("application/vnd.example.thing", [layer],
                                                 annotations={"n": "2"}), MEDIA_MANIFEST, "v2")
    stray = src.push_manifest(build_manifest("application/vnd.example.sig", [layer], subject=elsewhere),
                              MEDIA_MANIFEST)
    # listed with an artifactType (so discovery does not classify it) in the subject's index
    src.write_referrers_index(subject.digest, [  # type: ignore[attr-defined]
        Descriptor(MEDIA_MANIFEST, stray.digest, stray.size, artifact_type="application/vnd.example.sig")])
    out = ok(cli("copy", f"{registry}/bogus/thing:v1", f"oci:{tmp_path / 'dst'}", "--json"))
    assert out["referrers"] == []
    assert any(stray.digest in n and "names" in n for n in out["notes"]), out["notes"]


def test_layout_to_the_second_registry_with_the_referrers_api_and_back(world: World, ggcr: str,
                                                                       tmp_path: Path) -> None:
    w = world
    if w.kind == "ggcr":
        pytest.skip("the Distribution world copies to ggcr here; ggcr -> ggcr is the first test")
    before = resolved(w, f"{w.registry}/{w.repo}:1.0.0")
    layout = tmp_path / "bundle"
    ok(cli("copy", f"{w.registry}/{w.repo}:1.0.0", f"oci:{layout}", "--trust", w.trust, "--quiet"))
    out = ok(cli("copy", f"oci:{layout}:1.0.0", f"{ggcr}/mirror/strong", "--trust", w.trust, "--json"))
    assert out["destinationResolvesSame"] is True
    on_ggcr = resolved(w, f"{ggcr}/mirror/strong:1.0.0")
    # the listing's artifactType is the config media type there: the credential's and the cosign 3 bundle's
    assert on_ggcr["classifiedByManifest"] == 2
    assert _without_classification(on_ggcr) == _without_classification(before)
    store = open_store(f"{ggcr}/mirror/strong:1.0.0")
    listing = store.referrers(w.cart["manifestDigest"])
    assert listing.source == "api" and w.attest_out["attestationDigest"] in [d.digest for d in listing.descriptors]
    assert fallback_tag(w.cart["manifestDigest"]) not in store.list_tags()  # the registry indexes them itself
    # and from the registry with the API back into a layout
    back = tmp_path / "back"
    ok(cli("copy", f"{ggcr}/mirror/strong:1.0.0", f"oci:{back}", "--trust", w.trust, "--quiet"))
    assert resolved(w, f"oci:{back}:1.0.0") == before


def test_a_stale_copy_never_rolls_back_the_mirrors_status_list(world: World, tmp_path: Path) -> None:
    """Runs last in the module: it re-signs the world's status list (a newer sequence everywhere after it)."""
    w = world
    src = f"{w.registry}/{w.repo}:1.0.0"
    stale = tmp_path / "stale"
    mirror = f"{w.registry}/fresh/strong"
    ok(cli("copy", src, f"oci:{stale}", "--quiet"))
    ok(cli("copy", src, mirror, "--quiet"))
    tag = status_tag(_status_url(w))
    old = open_store(mirror).resolve(tag).digest
    ok(cli("status-refresh", "--key", w.verifier, "--issuer", w.verifier_did, "--state", w.tmp / "state"))
    # without --trust the issuer's (did:web) DID document is unknown: a newer list cannot be verified, so it does not
    # replace the mirror's (test_copy_hostile has the forgeries); with it, the source's newer list does
    refused = cli("copy", src, mirror, "--json")
    assert refused.exit_code == 1 and "give --trust FILE" in refused.output, refused.output
    assert open_store(mirror).resolve(tag).digest == old
    newer = ok(cli("copy", src, mirror, "--json", "--trust", w.trust))
    assert newer["statusLists"] == [tag] and open_store(mirror).resolve(tag).digest != old
    fresh = open_store(mirror).resolve(tag).digest
    back = ok(cli("copy", f"oci:{stale}:1.0.0", mirror, "--json"))  # the stale bundle must not put back the old
    assert back["statusLists"] == [] and any("destination's is newer" in n for n in back["notes"]), back
    assert open_store(mirror).resolve(tag).digest == fresh
    assert resolved(w, f"{mirror}:1.0.0")["capabilities"][0]["effective"] == "VERIFIED"


def test_progress_bar_counts_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    from acx_oci.cli.copy_cmd import _Bar

    bar = _Bar()
    bar(0, 0, "planning: 3 manifests")
    bar(512, 1024, "blob 0123456789ab")
    task = bar.progress.tasks[0]
    assert (task.completed, task.total, task.description) == (512, 1024, "blob 0123456789ab")
    bar(1024, 1024, "pushing 3 manifests")
    assert bar.progress.tasks[0].finished
    bar.stop()
    assert capsys.readouterr().out == ""  # the bar never touches stdout (--json output stays clean)


def test_large_blobs_stream_both_ways(registry: str, tmp_path: Path) -> None:
    from acx_oci.oci import MEDIA_MANIFEST, build_manifest
    from acx_oci.oci.transfer import STREAM_THRESHOLD

    data = os.urandom(STREAM_THRESHOLD + 4096)
    (tmp_path / "big.bin").write_bytes(data)
    src = open_store(f"{registry}/big/thing")
    layer = src.push_blob_file(tmp_path / "big.bin", "application/octet-stream")
    src.push_manifest(build_manifest("application/vnd.example.big", [layer]), MEDIA_MANIFEST, "v1")
    ok(cli("copy", f"{registry}/big/thing:v1", f"oci:{tmp_path / 'bundle'}", "--quiet"))
    assert open_store(f"oci:{tmp_path / 'bundle'}").fetch_blob(layer.digest, len(data)) == data
    assert not [p for p in (tmp_path / "bundle" / "blobs" / "sha256").iterdir() if p.name.startswith(".")]
    out = ok(cli("copy", f"oci:{tmp_path / 'bundle'}:v1", f"{registry}/big/again", "--json"))
    assert out["bytesCopied"] >= len(data)
    assert open_store(f"{registry}/big/again").fetch_blob(layer.digest, len(data)) == data
