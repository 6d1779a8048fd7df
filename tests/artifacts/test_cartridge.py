"""Cartridges end to end on a real registry and an OCI image layout (skopeo reads both)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from acx_oci.crypto import canonical
from acx_oci.model import build_rom, sign_rom
from acx_oci.oci import open_store
from acx_oci.services.artifacts.cartridge import push_parts, read_directory
from acx_oci.trust import load_identity

from ..support.cli import cli

CAP = "build-dag[snowflake+airflow+dbt]@data-engineering"
DISPLAY = "build-dag[pkg:generic/snowflake+pkg:pypi/apache-airflow+pkg:pypi/dbt-core]  verified=false"


@pytest.fixture()
def agent(tmp_path: Path) -> tuple[Path, Path, str]:
    """A publisher key, a cartridge directory and a trust file trusting the publisher."""
    res = cli("keygen", str(tmp_path / "pub"))
    assert res.exit_code == 0, res.output
    did = res.output.strip()
    res = cli("cartridge", "init", str(tmp_path / "agent"), "--id", "io.github.acme/dag-agent",
              "--version", "1.0.0", "--capability", CAP)
    assert res.exit_code == 0, res.output
    (tmp_path / "trust.yaml").write_text(f"publishers:\n  - id: {did}\n")
    return tmp_path / "agent", tmp_path / "pub.key", did


def push(directory: Path, ref: str, key: Path) -> dict[str, str]:
    res = cli("cartridge", "push", str(directory), ref, "--key", str(key), "--json")
    assert res.exit_code == 0, res.output
    out: dict[str, str] = json.loads(res.output)
    return out


def test_push_inspect_registry_and_layout(registry: str, agent: tuple[Path, Path, str], tmp_path: Path) -> None:
    directory, key, _did = agent
    ref = f"{registry}/acx/dag-agent:1.0.0"
    pushed = push(directory, ref, key)
    assert pushed["romDigest"].startswith("sha256:") and pushed["manifestDigest"].startswith("sha256:")

    raw = subprocess.run(["skopeo", "inspect", "--raw", "--tls-verify=false", f"docker://{ref}"],
                         check=True, capture_output=True).stdout
    manifest = json.loads(raw)
    assert manifest["artifactType"] == "application/vnd.acx.cartridge.v1"
    rom_layer = [x for x in manifest["layers"] if x["mediaType"] == "application/vnd.acx.cartridge.rom.v1+json"]
    assert rom_layer[0]["digest"] == pushed["romDigest"]

    res = cli("inspect", ref)
    assert res.exit_code == 0, res.output
    assert DISPLAY in res.output
    assert "intact, untrusted" in res.output and "warning" not in res.output

    res = cli("inspect", ref, "--trust", str(tmp_path / "trust.yaml"), "--json")
    assert res.exit_code == 0, res.output
    card = json.loads(res.output)
    assert card["signature"]["status"] == "valid"
    assert card["romDigest"] == pushed["romDigest"]
    assert card["manifestDigest"] == pushed["manifestDigest"]
    assert card["capabilities"][0]["display"] + "  verified=false" == DISPLAY
    assert card["capabilities"][0]["verified"] is False

    layout = f"oci:{tmp_path / 'layout'}:1.0.0"
    pushed_oci = push(directory, layout, key)
    assert pushed_oci["romDigest"] == pushed["romDigest"]
    raw_oci = subprocess.run(["skopeo", "inspect", "--raw", layout], check=True, capture_output=True).stdout
    assert json.loads(raw_oci)["artifactType"] == "application/vnd.acx.cartridge.v1"


def test_tampered_rom_with_old_signature(registry: str, agent: tuple[Path, Path, str], tmp_path: Path) -> None:
    directory, key, _ = agent
    signer = load_identity(key)
    source = read_directory(directory)
    rom_bytes = build_rom(source, signer.did)
    signature = sign_rom(rom_bytes, json.loads(rom_bytes), signer)
    store = open_store(f"{registry}/acx/tampered")
    push_parts(store, rom_bytes, source.files, signature, source.save, "good")
    rom = json.loads(rom_bytes)
    rom["capabilities"][0]["proficiency"] = {"score": 99, "verified": False, "evidenceRefs": []}
    push_parts(store, canonical(rom), source.files, signature, source.save, "bad")

    good = cli("inspect", f"{registry}/acx/tampered:good", "--json")
    assert good.exit_code == 0 and json.loads(good.output)["signature"]["status"] == "warning"
    bad = cli("inspect", f"{registry}/acx/tampered:bad")
    assert bad.exit_code == 1, bad.output
    assert "tampered" in bad.output
    pulled = cli("pull", f"{registry}/acx/tampered:bad", "-o", str(tmp_path / "out"))
    assert pulled.exit_code == 1 and "tampered" in pulled.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_file_layer_swapped_is_tampered(agent: tuple[Path, Path, str], tmp_path: Path) -> None:
    directory, key, _ = agent
    signer = load_identity(key)
    source = read_directory(directory)
    rom_bytes = build_rom(source, signer.did)
    signature = sign_rom(rom_bytes, json.loads(rom_bytes), signer)
    store = open_store(f"oci:{tmp_path / 'l'}")
    files = tuple((p, b"# evil skill\n") for p, _ in source.files)
    push_parts(store, rom_bytes, files, signature, source.save, "x")
    res = cli("inspect", f"oci:{tmp_path / 'l'}:x")
    assert res.exit_code == 1 and "tampered" in res.output


def test_unsigned_cartridge(agent: tuple[Path, Path, str], tmp_path: Path) -> None:
    directory, key, _ = agent
    source = read_directory(directory)
    rom_bytes = build_rom(source, load_identity(key).did)
    store = open_store(f"oci:{tmp_path / 'u'}")
    push_parts(store, rom_bytes, source.files, None, source.save, "x")
    res = cli("inspect", f"oci:{tmp_path / 'u'}:x", "--json")
    assert res.exit_code == 0 and json.loads(res.output)["signature"]["status"] == "unsigned"
    assert cli("pull", f"oci:{tmp_path / 'u'}:x", "-o", str(tmp_path / "o")).exit_code == 1


def test_pull_roundtrip_and_save_zone(registry: str, agent: tuple[Path, Path, str], tmp_path: Path) -> None:
    directory, key, _ = agent
    first = push(directory, f"{registry}/acx/roundtrip:1", key)
    out = tmp_path / "pulled"
    res = cli("pull", f"{registry}/acx/roundtrip:1", "-o", str(out))
    assert res.exit_code == 0, res.output
    assert (out / "cartridge.yaml").exists() and (out / "save.json").exists()
    skill = next((out / "skills").rglob("SKILL.md"))
    assert skill.read_bytes() == next((directory / "skills").rglob("SKILL.md")).read_bytes()
    # pushing the pulled directory reproduces the same ROM
    again = push(out, f"{registry}/acx/roundtrip:2", key)
    assert again["romDigest"] == first["romDigest"]
    # editing the SAVE zone changes the manifest digest, never the ROM digest
    (out / "save.json").write_text('{"notes": ["edited"]}\n')
    edited = push(out, f"{registry}/acx/roundtrip:3", key)
    assert edited["romDigest"] == first["romDigest"]
    assert edited["manifestDigest"] != first["manifestDigest"]


def test_pull_refuses_path_traversal(agent: tuple[Path, Path, str], tmp_path: Path) -> None:
    directory, key, _ = agent
    signer = load_identity(key)
    source = read_directory(directory)
    evil = (("skills/../../evil.sh", b"#!/bin/sh\n"),)
    source = type(source)(source.spec, source.capabilities, evil, source.save)
    rom_bytes = build_rom(source, signer.did)
    store = open_store(f"oci:{tmp_path / 'e'}")
    push_parts(store, rom_bytes, evil, sign_rom(rom_bytes, json.loads(rom_bytes), signer), source.save, "x")
    res = cli("pull", f"oci:{tmp_path / 'e'}:x", "-o", str(tmp_path / "out" / "inner"))
    assert res.exit_code == 2, res.output
    assert "unsafe layer path" in res.output
    assert not (tmp_path / "out" / "evil.sh").exists() and not (tmp_path / "evil.sh").exists()


def test_registry_down_fails_fast() -> None:
    start = time.monotonic()
    res = cli("inspect", "127.0.0.1:1/acx/nothing:1")
    elapsed = time.monotonic() - start
    assert res.exit_code == 3, res.output
    # the mechanism: the refused connection is the answer (no retry loop, no wait); wall time only a backstop
    assert res.output.count("\n") == 1 and "unreachable: connection refused" in res.output
    assert elapsed < 30
    assert "Traceback" not in res.output


def test_bad_inputs_are_one_line(agent: tuple[Path, Path, str], tmp_path: Path) -> None:
    directory, key, _ = agent
    (tmp_path / "bad.yaml").write_text("publishers: [unclosed\n")
    res = cli("inspect", "oci:/nonexistent", "--trust", str(tmp_path / "bad.yaml"))
    assert res.exit_code == 2 and res.output.startswith("error:") and res.output.count("\n") == 1
    (directory / "cartridge.yaml").write_text("id: [\n")
    res = cli("cartridge", "push", str(directory), f"oci:{tmp_path / 'x'}:1", "--key", str(key))
    assert res.exit_code == 2 and "cartridge.yaml" in res.output
    res = cli("cartridge", "init", str(tmp_path / "c2"), "--id", "io.x/y", "--version", "1.0.0",
              "--capability", "make-coffee[beans]")
    assert res.exit_code == 2 and "taskType" in res.output
    res = cli("inspect", "not a reference")
    assert res.exit_code == 2
    res = cli("inspect", f"oci:{tmp_path / 'missing'}:1")
    assert res.exit_code in (2, 3) and "Traceback" not in res.output


def test_not_a_cartridge(registry: str, tmp_path: Path) -> None:
    from acx_oci.oci import EMPTY_JSON, MEDIA_EMPTY, MEDIA_MANIFEST, build_manifest

    store = open_store(f"{registry}/acx/other")
    store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    layer = store.push_blob(b"hello", "text/plain")
    store.push_manifest(build_manifest("application/vnd.example.thing", [layer]), MEDIA_MANIFEST, "v1")
    res = cli("inspect", f"{registry}/acx/other:v1")
    assert res.exit_code == 2 and "expected artifactType application/vnd.acx.cartridge.v1" in res.output
