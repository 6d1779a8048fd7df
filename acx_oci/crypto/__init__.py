"""Pure cryptography, no files and no network: JCS canonical JSON (RFC 8785), SHA-256 digests, Ed25519
identities as ``did:key``, DSSE envelopes around in-toto statements, Data Integrity proofs (``eddsa-jcs-2022``) on
JSON-LD documents, and HPKE (RFC 9180) sealing to a DID's X25519 key. This face is what other wings use:

* keys: ``generate_identity()``, ``identity_from_seed(seed)`` -> :class:`Identity` (``private``, ``did``,
  ``method``); ``did_key(public)``, ``public_from_did_key(did)``, ``did_document(did, public)``,
  ``verify_ed25519(public, signature, message)``, ``counting_verifications()`` (a context that counts them)
* digests and bytes: ``canonical(obj)``, ``sha256_digest(data)`` (``sha256:<hex>``), ``check_digest(value)``,
  :class:`StreamDigest` (the same, fed in chunks), ``b58decode``, ``decode_prefixed``
* envelopes: ``sign_envelope(payload, payload_type, signer)``, ``verify_envelope(envelope, public_keys)`` and
  ``envelope_payload``; in-toto ``statement``, ``statement_bytes``, ``subject_for_digest``
* Data Integrity: ``sign(document, signer, verification_method, created)``, ``without_proof(document)``
* sealing: ``recipient_from_identity`` / ``recipient_from_did_document`` -> :class:`Recipient`, ``unseal``
  (``acx_oci.crypto.seal.seal`` is imported from its module: a face name ``seal`` would hide the module)

Example::

    from acx_oci.crypto import (PAYLOAD_TYPE_INTOTO, canonical, generate_identity, public_from_did_key,
                                sign_envelope, verify_envelope)

    me = generate_identity()
    envelope = sign_envelope(canonical({"hello": "world"}), PAYLOAD_TYPE_INTOTO, me)
    payload_type, payload, _key = verify_envelope(envelope, [public_from_did_key(me.did)])
    assert payload_type == PAYLOAD_TYPE_INTOTO and payload == b'{"hello":"world"}'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.crypto.dataintegrity import sign, without_proof
    from acx_oci.crypto.digest import StreamDigest, check_digest, sha256_digest
    from acx_oci.crypto.dsse import PAYLOAD_TYPE_INTOTO, envelope_payload, sign_envelope, verify_envelope
    from acx_oci.crypto.intoto import STATEMENT_TYPE, statement, statement_bytes, subject_for_digest
    from acx_oci.crypto.jcs import canonical
    from acx_oci.crypto.keys import (
        ED25519_PRIV_PREFIX,
        Identity,
        b58decode,
        counting_verifications,
        decode_prefixed,
        did_document,
        did_key,
        ed25519_public_from_multikey,
        generate_identity,
        identity_from_seed,
        public_from_did_key,
        verify_ed25519,
    )
    from acx_oci.crypto.seal import Recipient, recipient_from_did_document, recipient_from_identity, unseal
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "dataintegrity": ("sign", "without_proof"),
        "digest": ("StreamDigest", "check_digest", "sha256_digest"),
        "dsse": ("PAYLOAD_TYPE_INTOTO", "envelope_payload", "sign_envelope", "verify_envelope"),
        "intoto": ("STATEMENT_TYPE", "statement", "statement_bytes", "subject_for_digest"),
        "jcs": ("canonical",),
        "keys": ("ED25519_PRIV_PREFIX", "Identity", "b58decode", "counting_verifications", "decode_prefixed",
            "did_document", "did_key", "ed25519_public_from_multikey", "generate_identity", "identity_from_seed",
            "public_from_did_key", "verify_ed25519"),
        "seal": ("Recipient", "recipient_from_did_document", "recipient_from_identity", "unseal"),
    })

__all__ = ["ED25519_PRIV_PREFIX", "PAYLOAD_TYPE_INTOTO", "STATEMENT_TYPE", "Identity", "Recipient", "StreamDigest",
           "b58decode", "canonical", "check_digest", "counting_verifications", "decode_prefixed", "did_document",
           "did_key", "ed25519_public_from_multikey", "envelope_payload", "generate_identity", "identity_from_seed",
           "public_from_did_key", "recipient_from_did_document", "recipient_from_identity", "sha256_digest", "sign",
           "sign_envelope", "statement", "statement_bytes", "subject_for_digest", "unseal", "verify_ed25519",
           "verify_envelope", "without_proof"]
