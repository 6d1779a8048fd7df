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
