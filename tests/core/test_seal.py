"""Sealing to verifiers' X25519 keys (HPKE base mode + one data key)."""

from __future__ import annotations

import json

import pytest

from acx_oci.crypto import generate_identity, seal
from acx_oci.errors import UsageError, VerificationError

INFO = b"acx-oci/test/v1"


def test_each_recipient_unseals_the_same_bytes() -> None:
    a, b, outsider = generate_identity(), generate_identity("did:web:verifier.example"), generate_identity()
    recips = [seal.recipient_from_did_document(a.did_document()), seal.recipient_from_did_document(b.did_document())]
    sealed = seal.seal(b"secret slice", recips, INFO)
    assert sealed["recipients"][1]["kid"] == "did:web:verifier.example#key-2"
    assert seal.unseal(sealed, a, INFO) == b"secret slice"
    assert seal.unseal(sealed, b, INFO) == b"secret slice"
    with pytest.raises(VerificationError, match="not sealed to"):
        seal.unseal(sealed, outsider, INFO)
    assert b"secret" not in json.dumps(sealed).encode()


def test_tampering_and_wrong_purpose_fail_closed() -> None:
    a = generate_identity()
    sealed = seal.seal(b"x" * 100, [seal.recipient_from_identity(a)], INFO)
    ct = bytearray(seal.b64decode_any(sealed["ciphertext"], "ct"))
    ct[5] ^= 1
    bad = {**sealed, "ciphertext": seal._b64(bytes(ct))}
    with pytest.raises(VerificationError, match="decryption failed"):
        seal.unseal(bad, a, INFO)
    with pytest.raises(UsageError, match="sealed for"):
        seal.unseal(sealed, a, b"acx-oci/other/v1")
    with pytest.raises(UsageError):
        seal.seal(b"x", [], INFO)


def test_did_document_without_key_agreement_is_refused() -> None:
    doc = generate_identity().did_document()
    doc["keyAgreement"] = []
    with pytest.raises(UsageError, match="keyAgreement"):
        seal.recipient_from_did_document(doc)
