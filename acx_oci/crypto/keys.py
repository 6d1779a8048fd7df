"""Ed25519 identities, Multikey encoding, did:key, and the derived X25519 key.

One Ed25519 seed is a whole identity: the X25519 key that receives sealed
benchmark slices is derived from it the way did:key derives its keyAgreement
key, so a did:key and its sealing key can never disagree.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import base58
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from acx_oci.errors import UsageError
from acx_oci.urls import without_fragment

ED25519_PUB_PREFIX = b"\xed\x01"
ED25519_PRIV_PREFIX = b"\x80\x26"
X25519_PUB_PREFIX = b"\xec\x01"
_P = 2**255 - 19


def b58encode(data: bytes) -> str:
    """Multibase base58btc (``z`` prefix), the encoding of Multikeys and of eddsa-jcs-2022 proof values."""
    return "z" + base58.b58encode(data).decode("ascii")


#: Base58 decoding is quadratic in the length (160,000 characters: 15 s, 320,000: 61 s). What we decode is a key
#: (34 bytes: 47 characters) or a signature (64 bytes: 88): anything much longer is refused before it is decoded.
MAX_MULTIBASE_CHARS = 256


def b58decode(value: str, what: str = "multibase value") -> bytes:
    """Decode multibase base58btc; refuses values longer than a key or signature needs, before decoding them."""
    if not isinstance(value, str) or not value.startswith("z"):
        raise UsageError(f"{what}: expected multibase base58btc ('z' prefix), found {str(value)[:20]!r}")
    if len(value) > MAX_MULTIBASE_CHARS:
        raise UsageError(f"{what}: expected at most {MAX_MULTIBASE_CHARS} base58btc characters (a key or a "
                         f"signature), found {len(value)}")
    try:
        return base58.b58decode(value[1:])
    except ValueError as exc:
        raise UsageError(f"{what}: invalid base58btc: {exc}") from None


def decode_prefixed(value: str, prefix: bytes, what: str) -> bytes:
    """The 32 key bytes after a multicodec prefix; UsageError names ``what`` when the prefix or length is wrong."""
    raw = b58decode(value, what)
    if not raw.startswith(prefix) or len(raw) != len(prefix) + 32:
        raise UsageError(f"{what}: expected multicodec 0x{prefix.hex()} + 32 bytes, found {len(raw)} bytes")
    return raw[len(prefix):]


def ed25519_multikey(public: bytes) -> str:
    """``z6Mk...``: multibase base58btc of 0xed01 || public key."""
    return b58encode(ED25519_PUB_PREFIX + public)


def ed25519_public_from_multikey(value: str) -> bytes:
    """The raw Ed25519 public key from a ``z6Mk...`` Multikey."""
    return decode_prefixed(value, ED25519_PUB_PREFIX, "Ed25519 publicKeyMultibase")


def x25519_multikey(public: bytes) -> str:
    """``z6LS...``: the Multikey of an X25519 key, the form a DID document lists for sealing."""
    return b58encode(X25519_PUB_PREFIX + public)


def x25519_public_from_multikey(value: str) -> bytes:
    """The raw X25519 public key from a ``z6LS...`` Multikey, as a sealer reads it from a DID document."""
    return decode_prefixed(value, X25519_PUB_PREFIX, "X25519 publicKeyMultibase")


def ed25519_to_x25519_public(public: bytes) -> bytes:
    """Birational map Edwards y -> Montgomery u = (1 + y) / (1 - y) mod p (RFC 7748)."""
    y = int.from_bytes(public, "little") & ((1 << 255) - 1)
    u = (1 + y) * pow(1 - y, _P - 2, _P) % _P
    return u.to_bytes(32, "little")


def did_key(public: bytes) -> str:
    """The ``did:key`` of an Ed25519 public key: an identity that needs no DID document fetched."""
    return "did:key:" + ed25519_multikey(public)


def public_from_did_key(did: str) -> bytes:
    """The Ed25519 key a ``did:key`` names (a fragment is ignored); UsageError for any other DID method."""
    if not did.startswith("did:key:"):
        raise UsageError(f"expected a did:key, found {did!r}")
    return ed25519_public_from_multikey(without_fragment(did)[len("did:key:"):])


# Signature verifications made in the current context (resolve reports them per phase; tests count a flood's cost).
_verifications: ContextVar[list[int] | None] = ContextVar("acx_oci_signature_verifications", default=None)


@contextmanager
def counting_verifications() -> Iterator[list[int]]:
    """Count :func:`verify_ed25519` calls on this thread's context inside the block (``counter[0]``)."""
    counter = [0]
    token = _verifications.set(counter)
    try:
        yield counter
    finally:
        _verifications.reset(token)


def verify_ed25519(public: bytes, signature: bytes, message: bytes) -> bool:
    """False for a bad signature or a malformed key: callers turn False into their own reason code."""
    counter = _verifications.get()
    if counter is not None:
        counter[0] += 1
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


@dataclass(frozen=True)
class Identity:
    """An Ed25519 signing key and the DID it speaks for."""

    private: Ed25519PrivateKey
    did: str
    method: str | None = None  # the assertion method id this key is under, when a DID document names it

    @property
    def seed(self) -> bytes:
        """The 32-byte private seed: the X25519 key derives from it, and ``identity_from_seed`` restores it."""
        return self.private.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )

    @property
    def public_bytes(self) -> bytes:
        """The raw 32-byte Ed25519 public key."""
        return self.private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    @property
    def multikey(self) -> str:
        """The public key as a Multikey, the form DID documents and verification method ids carry."""
        return ed25519_multikey(self.public_bytes)

    @property
    def did_key(self) -> str:
        """The ``did:key`` of this key, which may differ from ``did`` when the key speaks for a did:web."""
        return did_key(self.public_bytes)

    @property
    def verification_method(self) -> str:
        """The id of the Ed25519 method in this identity's DID document."""
        if self.method is not None:
            return self.method
        if self.did.startswith("did:key:"):
            return f"{self.did}#{self.multikey}"
        return f"{self.did}#key-1"

    @property
    def x25519_private(self) -> X25519PrivateKey:
        """X25519 secret = clamped first half of SHA-512(seed), as Ed25519 itself expands it."""
        return X25519PrivateKey.from_private_bytes(hashlib.sha512(self.seed).digest()[:32])

    @property
    def x25519_public_bytes(self) -> bytes:
        """The X25519 public key mapped from the Ed25519 one, so one key both signs and receives sealed bytes."""
        return ed25519_to_x25519_public(self.public_bytes)

    def sign(self, message: bytes) -> bytes:
        """Raw Ed25519 signature over exact bytes (the caller canonicalises first)."""
        return self.private.sign(message)

    def pem(self) -> bytes:
        """Unencrypted PKCS#8 PEM, the key file format: whoever reads it is this identity."""
        return self.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    def did_document(self) -> dict[str, Any]:
        """The DID document to publish for this identity (Ed25519 and derived X25519 keys)."""
        return did_document(self.did, self.public_bytes)


def identity_from_seed(seed: bytes, did: str | None = None) -> Identity:
    """Restore an identity from its seed; ``did`` defaults to the key's own ``did:key``."""
    key = Ed25519PrivateKey.from_private_bytes(seed)
    pub = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return Identity(key, did or did_key(pub))


def generate_identity(did: str | None = None) -> Identity:
    """A fresh identity from the OS random source; ``did`` defaults to its ``did:key``."""
    return identity_from_seed(os.urandom(32), did)


def did_document(did: str, ed_public: bytes) -> dict[str, Any]:
    """A DID document with the Ed25519 key and its derived X25519 key as Multikeys."""
    ed_mk = ed25519_multikey(ed_public)
    x_mk = x25519_multikey(ed25519_to_x25519_public(ed_public))
    if did.startswith("did:key:"):
        ed_id, x_id = f"{did}#{ed_mk}", f"{did}#{x_mk}"
    else:
        ed_id, x_id = f"{did}#key-1", f"{did}#key-2"
    return {
        "@context": ["https://www.w3.org/ns/did/v1", "https://w3id.org/security/multikey/v1"],
        "id": did,
        "verificationMethod": [
            {"id": ed_id, "type": "Multikey", "controller": did, "publicKeyMultibase": ed_mk},
            {"id": x_id, "type": "Multikey", "controller": did, "publicKeyMultibase": x_mk},
        ],
        "authentication": [ed_id],
        "assertionMethod": [ed_id],
        "keyAgreement": [x_id],
    }
