"""Sealing bytes to verifiers' X25519 keys with HPKE (RFC 9180, base mode).

A fresh random 256-bit data key encrypts the content once (AES-256-GCM); the
data key alone is HPKE-sealed to each recipient. So adding a verifier costs
one small HPKE ciphertext, not another copy of the slice, and every recipient
unseals the same bytes. The sealed document names recipients by key id only:
nothing about the plaintext (not even its digest, which would let anyone
confirm a guess) is in the clear.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hpke
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from acx_oci.crypto.dsse import b64decode_any
from acx_oci.crypto.keys import Identity, x25519_multikey, x25519_public_from_multikey
from acx_oci.errors import UsageError, VerificationError
from acx_oci.jsonio import as_array

SEALED_SCHEMA = "acx.sealed/1"
HPKE_SUITE_NAME = "DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-256-GCM"
CONTENT_AEAD = "AES-256-GCM"
_SUITE = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)


@dataclass(frozen=True)
class Recipient:
    """A verifier's sealing key: an id (DID URL) and the raw 32-byte X25519 public key."""

    kid: str
    x25519_public: bytes

    @property
    def multikey(self) -> str:
        """The X25519 key as a ``z6LS...`` Multikey, written beside each sealed key so a recipient finds its own."""
        return x25519_multikey(self.x25519_public)


def recipient_from_identity(ident: Identity) -> Recipient:
    """This verifier as a sealing recipient: its did:key names the X25519 Multikey, another DID its ``#key-2``."""
    return Recipient(f"{ident.did}#{x25519_multikey(ident.x25519_public_bytes)}"
                     if ident.did.startswith("did:key:") else f"{ident.did}#key-2", ident.x25519_public_bytes)


def recipient_from_did_document(doc: Any, what: str = "DID document") -> Recipient:
    """The X25519 Multikey that ``keyAgreement`` references (by id or embedded)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("id"), str):
        raise UsageError(f"{what}: expected a DID document with an id")
    methods = {m.get("id"): m for m in as_array(doc.get("verificationMethod")) if isinstance(m, dict)}
    for entry in as_array(doc.get("keyAgreement")):
        method = methods.get(entry) if isinstance(entry, str) else entry
        if isinstance(method, dict) and isinstance(method.get("publicKeyMultibase"), str):
            pub = x25519_public_from_multikey(method["publicKeyMultibase"])
            return Recipient(str(method.get("id") or doc["id"]), pub)
    raise UsageError(f"{what}: no X25519 Multikey in keyAgreement for {doc['id']}")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def seal(plaintext: bytes, recipients: list[Recipient], info: bytes) -> dict[str, Any]:
    """Encrypt ``plaintext`` once and its data key to every recipient; ``info`` binds the purpose."""
    if not recipients:
        raise UsageError("sealing needs at least one recipient")
    data_key = AESGCM.generate_key(bit_length=256)
    nonce = os.urandom(12)
    ciphertext = AESGCM(data_key).encrypt(nonce, plaintext, info)
    sealed_keys = []
    for r in recipients:
        pub = X25519PublicKey.from_public_bytes(r.x25519_public)
        sealed_keys.append({"kid": r.kid, "x25519": r.multikey, "enc": _b64(_SUITE.encrypt(data_key, pub, info=info))})
    return {
        "schema": SEALED_SCHEMA,
        "hpke": HPKE_SUITE_NAME,
        "aead": CONTENT_AEAD,
        "info": info.decode("ascii"),
        "recipients": sealed_keys,
        "nonce": _b64(nonce),
        "ciphertext": _b64(ciphertext),
    }


def unseal(sealed: Any, ident: Identity, info: bytes) -> bytes:
    """Open a sealed document with the identity's derived X25519 key."""
    if not isinstance(sealed, dict) or sealed.get("schema") != SEALED_SCHEMA:
        raise UsageError(f"sealed document: expected schema {SEALED_SCHEMA}")
    if sealed.get("hpke") != HPKE_SUITE_NAME or sealed.get("aead") != CONTENT_AEAD:
        raise UsageError(f"sealed document: unsupported algorithms {sealed.get('hpke')!r} / {sealed.get('aead')!r}")
    if sealed.get("info") != info.decode("ascii"):
        raise UsageError(f"sealed document: sealed for {sealed.get('info')!r}, expected {info.decode('ascii')!r}")
    mine = x25519_multikey(ident.x25519_public_bytes)
    entries = [r for r in sealed.get("recipients") or [] if isinstance(r, dict) and r.get("x25519") == mine]
    if not entries:
        raise VerificationError(f"sealed document: not sealed to {ident.did} (X25519 key {mine[:16]}...)")
    try:
        data_key = _SUITE.decrypt(b64decode_any(str(entries[0].get("enc")), "sealed key"), ident.x25519_private,
                                  info=info)
        nonce = b64decode_any(str(sealed.get("nonce")), "sealed nonce")
        return AESGCM(data_key).decrypt(nonce, b64decode_any(str(sealed.get("ciphertext")), "ciphertext"), info)
    except (InvalidTag, ValueError) as exc:
        raise VerificationError(f"sealed document: decryption failed for {ident.did} ({type(exc).__name__})") from None
