"""References as users write them for skopeo: ``docker://`` names a registry as ``oci:`` names a layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from acx_oci.errors import UsageError
from acx_oci.oci import parse_reference

ROOT = Path(__file__).resolve().parent.parent.parent


def test_docker_transport_names_the_same_registry_reference() -> None:
    plain = parse_reference("127.0.0.1:5000/demo/cart:1.0.0")
    assert parse_reference("docker://127.0.0.1:5000/demo/cart:1.0.0") == plain
    digest = "sha256:" + "a" * 64
    assert parse_reference(f"docker://registry.example/a/b@{digest}").digest == digest


@pytest.mark.parametrize("text", ["docker://", "docker://cart:1.0", "docker://host.example/UPPER"])
def test_a_bad_docker_reference_is_one_line(text: str) -> None:
    with pytest.raises(UsageError) as exc:
        parse_reference(text)
    assert "\n" not in str(exc.value) and str(exc.value).startswith("reference")


@pytest.mark.parametrize("text", ["http://localhost:5000/acme/dag-agent:1.0.0",
                                  "https://registry.example/acme/dag-agent:1.0.0"])
def test_a_url_names_the_reference_to_write_instead(text: str) -> None:
    """A user who pastes the registry's URL was told "invalid repository name '/localhost:5000/acme/dag-agent'"."""
    with pytest.raises(UsageError) as exc:
        parse_reference(text)
    bare = text.split("://", 1)[1]
    assert f"a reference has no URL scheme: write '{bare}'" in str(exc.value), exc.value
    assert "\n" not in str(exc.value)


def test_a_missing_key_reads_the_same_in_every_command(tmp_path: Path) -> None:
    """``cartridge push --key``, ``attest --key``, ``benchmark unseal --key``: one wording, exit 2, nothing written."""
    from ..support.cli import cli

    missing = tmp_path / "missing.key"
    runs = [
        cli("cartridge", "push", str(ROOT / "testdata" / "agents"), f"oci:{tmp_path / 'l'}:1", "--key", missing),
        cli("attest", f"oci:{tmp_path / 'l'}:1", "--benchmark", f"oci:{tmp_path / 'b'}:1", "--key", missing,
            "--issuer", "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", "-o", tmp_path / "out"),
        cli("benchmark", "unseal", f"oci:{tmp_path / 'b'}:1", "--key", missing, "--output", tmp_path / "h.json"),
    ]
    for res in runs:
        assert res.exit_code == 2, res.output
        assert f"key file: file not found: {missing}" in res.stderr, res.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "l").exists()


def test_a_did_document_given_as_the_key_names_the_private_key_beside_it(tmp_path: Path) -> None:
    """keygen writes PREFIX.key and PREFIX.did.json; passing the second said only 'expected secretKeyMultibase'."""
    from ..support.cli import cli

    assert cli("keygen", tmp_path / "publisher").exit_code == 0
    did_doc = tmp_path / "publisher.did.json"
    res = cli("cartridge", "push", str(ROOT / "testdata" / "agents"), f"oci:{tmp_path / 'l'}:1", "--key", did_doc)
    assert res.exit_code == 2, res.output
    assert f"this is a DID document (public keys only); pass the private key, {tmp_path / 'publisher.key'}" \
        in res.stderr, res.stderr
    assert not (tmp_path / "l").exists()
