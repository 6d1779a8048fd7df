"""Keys: did:key vectors, the X25519 derivation, key files, keygen."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from acx_oci.crypto import identity_from_seed
from acx_oci.crypto.keys import x25519_multikey
from acx_oci.errors import UsageError
from acx_oci.trust import load_identity

from ..support.cli import cli


def test_did_key_vectors_and_x25519_derivation(vectors: Path) -> None:
    data = json.loads((vectors / "did" / "did-key-ed25519-x25519-test-vectors.json").read_text())
    checked = 0
    for did, entry in data.items():
        ident = identity_from_seed(bytes.fromhex(entry["seed"]))
        assert ident.did == did
        ka_id = entry["keyAgreementKeyPair"]["id"].split("#")[-1]
        assert x25519_multikey(ident.x25519_public_bytes) == ka_id
        # the derived X25519 secret really belongs to the derived public key
        pub = ident.x25519_private.public_key().public_bytes(serialization.Encoding.Raw,
                                                            serialization.PublicFormat.Raw)
        assert pub == ident.x25519_public_bytes
        doc = ident.did_document()
        assert doc["keyAgreement"] == [f"{did}#{ka_id}"]
        checked += 1
    assert checked == 5


def test_spec_example_did_document(vectors: Path) -> None:
    example = json.loads((vectors / "did" / "did-key-spec-example-did-document.json").read_text())
    ed = example["verificationMethod"][0]["publicKeyMultibase"]
    from acx_oci.crypto import ed25519_public_from_multikey
    from acx_oci.crypto.keys import ed25519_to_x25519_public

    x = x25519_multikey(ed25519_to_x25519_public(ed25519_public_from_multikey(ed)))
    assert example["keyAgreement"][0]["publicKeyMultibase"] == x


def test_w3c_keypair_json(vectors: Path) -> None:
    ident = load_identity(vectors / "eddsa-jcs-2022" / "keyPair.json")
    assert ident.did == "did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2"


def test_keygen_writes_pem_0600_and_did_document(tmp_path: Path) -> None:
    res = cli("keygen", tmp_path / "pub")
    assert res.exit_code == 0, res.output
    did = res.output.strip()
    assert did.startswith("did:key:z6Mk")
    key = tmp_path / "pub.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    doc = json.loads((tmp_path / "pub.did.json").read_text())
    assert doc["id"] == did
    assert [vm["type"] for vm in doc["verificationMethod"]] == ["Multikey", "Multikey"]
    assert doc["assertionMethod"] == [doc["verificationMethod"][0]["id"]]
    assert doc["keyAgreement"] == [doc["verificationMethod"][1]["id"]]
    assert doc["verificationMethod"][1]["publicKeyMultibase"].startswith("z6LS")
    assert load_identity(key).did == did
    # refuses to overwrite
    again = cli("keygen", tmp_path / "pub")
    assert again.exit_code == 2 and "refusing to overwrite" in again.output


def test_keygen_did_web(tmp_path: Path) -> None:
    res = cli("keygen", tmp_path / "v", "--did", "did:web:verifier.example")
    assert res.exit_code == 0 and res.output.strip() == "did:web:verifier.example"
    doc = json.loads((tmp_path / "v.did.json").read_text())
    assert doc["assertionMethod"] == ["did:web:verifier.example#key-1"]
    assert load_identity(tmp_path / "v.key").did == "did:web:verifier.example"


@pytest.mark.parametrize("content", [b"not a key", b"{}", b'{"secretKeyMultibase": "zabc"}', b"{broken"])
def test_bad_key_files(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "bad.key"
    p.write_bytes(content)
    with pytest.raises(UsageError, match="key file"):
        load_identity(p)
