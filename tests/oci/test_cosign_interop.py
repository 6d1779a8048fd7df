"""cosign 2.5 (the real binary, offline) verifies our projection: the level attestation by the verifier's key,
the cartridge signature by the publisher's, and refuses a predicate changed by one byte in the registry."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from acx_oci.oci import open_store, parse_reference
from acx_oci.services.artifacts import PREDICATE_LEVEL, cosign_tag
from acx_oci.services.artifacts.cosign_projection import push_attestation_envelope
from acx_oci.trust import load_identity

from ..support.attest_world import attested_level
from ..support.cli import cli, ok
from ..support.cosign_cli import cosign, cosign_binary


@pytest.fixture(scope="module")
def attested(registry: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One cartridge pushed (signed by the publisher) and attested (the level published), plus the PEM keys."""
    cosign_binary()
    tmp = tmp_path_factory.mktemp("cosign")
    a = attested_level(tmp, registry)
    ok(cli("keys", "export-pem", str(tmp / "publisher.key"), "-o", str(tmp / "publisher.pub")))
    return a


def _verify_attestation(a: dict[str, Any], key: str = "verifier.pub") -> Any:
    return cosign("verify-attestation", "--key", str(a["tmp"] / key), "--type", PREDICATE_LEVEL, a["ref"])


def test_cosign_verifies_the_level_attestation(attested: dict[str, Any]) -> None:
    proc = _verify_attestation(attested)
    assert proc.returncode == 0, proc.stderr
    envelope = json.loads(proc.stdout.strip().splitlines()[0])
    st = json.loads(base64.b64decode(envelope["payload"]))
    assert st["predicateType"] == PREDICATE_LEVEL
    assert st["subject"][0]["digest"] == {"sha256": attested["digest"].split(":", 1)[1]}
    result = attested["credential"]["credentialSubject"]["result"][0]
    pred = st["predicate"]
    assert pred["level"] == result["acx:acxLevel"] and pred["tier"] == result["acx:careerTier"]
    assert pred["capabilityId"] == result["acx:capabilityId"] and pred["romDigest"] == result["acx:cartridgeRomDigest"]
    assert pred["capability"] == attested["credential"]["name"].split(" — ", 1)[1]  # the readable name
    assert pred["gamesPlayed"] == result["acx:gamesPlayed"] and pred["credentialDigest"].startswith("sha256:")


def test_cosign_refuses_the_wrong_key(attested: dict[str, Any]) -> None:
    proc = _verify_attestation(attested, "publisher.pub")
    assert proc.returncode != 0


def test_cosign_verifies_the_publisher_signature(attested: dict[str, Any]) -> None:
    proc = cosign("verify", "--key", str(attested["tmp"] / "publisher.pub"), attested["ref"])
    assert proc.returncode == 0, proc.stderr
    (payload,) = json.loads(proc.stdout.strip().splitlines()[0])
    assert payload["critical"]["image"]["docker-manifest-digest"] == attested["digest"]
    assert cosign("verify", "--key", str(attested["tmp"] / "verifier.pub"), attested["ref"]).returncode != 0


def test_cosign_refuses_a_predicate_changed_by_one_byte(attested: dict[str, Any]) -> None:
    """Runs last in the module: it replaces the attestation in the registry."""
    ref = parse_reference(attested["ref"])
    with open_store(ref) as store:
        manifest = store.fetch_manifest(cosign_tag(attested["digest"], "att"))
        envelope = json.loads(store.fetch_blob(manifest.layers[0].digest))
        payload = base64.b64decode(envelope["payload"])
        at = payload.index(b'"tier":"') + len(b'"tier":"')
        tampered = payload[:at] + bytes([payload[at] ^ 0x20]) + payload[at + 1:]  # one letter's case
        envelope["payload"] = base64.b64encode(tampered).decode()
        push_attestation_envelope(store, attested["digest"], json.dumps(envelope).encode())
    proc = _verify_attestation(attested)
    assert proc.returncode != 0
    assert "signature" in (proc.stderr + proc.stdout).lower()


def test_export_pem_is_the_identitys_ed25519_key(tmp_path: Path) -> None:
    """The PEM is PKIX SubjectPublicKeyInfo of the same raw key; an unwritable -o is one line, exit 2."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    ok(cli("keygen", str(tmp_path / "v")))
    pem = ok(cli("keys", "export-pem", str(tmp_path / "v.key")))
    key = serialization.load_pem_public_key(pem.encode())
    assert isinstance(key, Ed25519PublicKey)
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert raw == load_identity(tmp_path / "v.key").public_bytes
    res = cli("keys", "export-pem", str(tmp_path / "v.key"), "-o", str(tmp_path / "no" / "dir" / "v.pub"))
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "cannot write" in res.output
