"""Interop with the Python ORAS SDK (``oras`` on PyPI, the package the design card names).

oras-py pulls a cartridge and an attestation that acx-oci pushed, byte for byte, and acx-oci reads
(``pull``, with the ROM signature verified) a cartridge that oras-py pushed file by file. Why
acx-oci still speaks to registries with its own client is in docs/concepts.md ("Dependencies, and why").
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from acx_oci.oci import ARTIFACT_ATTESTATION, ARTIFACT_CARTRIDGE, MEDIA_MANIFEST, open_store

from ..support.cli import cli, ok
from ..support.resolve_world import World, build_resolve_world

oras_client = pytest.importorskip("oras.client")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, registry: str) -> World:
    return build_resolve_world(tmp_path_factory.mktemp("oras"), registry)


def _sha256(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _oras(registry: str) -> Any:
    return oras_client.OrasClient(hostname=registry, insecure=True)


def test_oras_py_pulls_what_acx_pushed_byte_for_byte(world: World, tmp_path: Path) -> None:
    client = _oras(world.registry)
    store = open_store(f"{world.registry}/{world.repo}")
    targets = {"cartridge": f"{world.registry}/{world.repo}:1.0.0",
               "attestation": f"{world.registry}/{world.repo}@{world.attest_out['attestationDigest']}"}
    for name, target in targets.items():
        manifest = store.fetch_manifest(target.rsplit(":", 1)[-1] if name == "cartridge" else
                                        world.attest_out["attestationDigest"])
        assert manifest.artifact_type == (ARTIFACT_CARTRIDGE if name == "cartridge" else ARTIFACT_ATTESTATION)
        # oras-py reads the same manifest document
        assert client.get_manifest(target) == json.loads(manifest.raw)
        out = tmp_path / name
        files = [Path(f) for f in client.pull(target=target, outdir=str(out))]
        assert len(files) == len(manifest.layers) > 0
        by_title = {layer.annotations["org.opencontainers.image.title"]: layer for layer in manifest.layers}
        for f in files:
            layer = by_title[str(f.relative_to(out))]
            assert _sha256(f) == layer.digest and f.stat().st_size == layer.size
            assert f.read_bytes() == store.fetch_blob(layer.digest)
    credential = json.loads((tmp_path / "attestation" / "credential.json").read_bytes())
    assert "VerifiableCredential" in credential["type"]
    assert world.cart["manifestDigest"] in json.dumps(credential)  # bound to the cartridge oras-py pulled


def test_acx_reads_a_cartridge_oras_py_pushed(world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cartridge's files, pulled by oras-py and pushed again by oras-py with the same media types
    (the config carries the cartridge type, as ORAS clients that predate artifactType do): acx-oci
    pulls it and the publisher's ROM signature still verifies."""
    client = _oras(world.registry)
    store = open_store(f"{world.registry}/{world.repo}")
    manifest = store.fetch_manifest("1.0.0")
    src = tmp_path / "files"
    client.pull(target=f"{world.registry}/{world.repo}:1.0.0", outdir=str(src))
    (tmp_path / "config.json").write_text("{}")
    titles = [layer.annotations["org.opencontainers.image.title"] for layer in manifest.layers]
    specs = [f"{title}:{layer.media_type}" for title, layer in zip(titles, manifest.layers, strict=True)]
    # oras-py titles a layer with the file's basename; an annotation file (as with the ORAS CLI) keeps the
    # relative path the ROM lists
    annotations = tmp_path / "annotations.json"
    annotations.write_text(json.dumps({t: {"org.opencontainers.image.title": t} for t in titles}))
    target = f"{world.registry}/oras/pushed:1.0.0"
    monkeypatch.chdir(src)  # relative paths, as the ROM lists them
    resp = client.push(target=target, files=specs,
                       manifest_config=f"{tmp_path / 'config.json'}:{ARTIFACT_CARTRIDGE}",
                       annotation_file=str(annotations), disable_path_validation=True)
    assert resp.status_code in (200, 201)
    theirs = open_store(f"{world.registry}/oras/pushed").fetch_manifest("1.0.0")
    assert theirs.media_type == MEDIA_MANIFEST and theirs.artifact_type == ARTIFACT_CARTRIDGE
    assert [(x.digest, x.media_type) for x in theirs.layers] == [(x.digest, x.media_type) for x in manifest.layers]
    info = ok(cli("inspect", target, "--trust", str(world.trust), "--json"))
    assert info["signature"]["status"] == "valid", info["signature"]
    assert json.dumps(info).count(world.cart["romDigest"]) >= 1
    ok(cli("pull", target, "-o", str(tmp_path / "acx-pulled"), "--trust", str(world.trust), "--json"))
    rom = next(x for x in manifest.layers if x.annotations["org.opencontainers.image.title"] == "rom.json")
    assert _sha256(tmp_path / "acx-pulled" / "rom.json") == rom.digest
