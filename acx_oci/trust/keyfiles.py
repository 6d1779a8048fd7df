"""Key files: the only place acx-oci reads or writes signing keys on disk.

``PREFIX.key`` is a PKCS#8 PEM Ed25519 key (mode 0600) and ``PREFIX.did.json``
its DID document; a Multikey key-pair JSON is accepted too. A key is only
bound to a DID the files can show it belongs to.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from acx_oci.crypto import ED25519_PRIV_PREFIX, Identity, decode_prefixed, did_key, identity_from_seed
from acx_oci.errors import UsageError
from acx_oci.files import read_bytes
from acx_oci.jsonio import parse_json
from acx_oci.trust.did import assertion_methods, check_did


def load_identity(path: str | Path, did: str | None = None) -> Identity:
    """Load ``PREFIX.key`` (PKCS#8 PEM) or a Multikey key-pair JSON file.

    The DID is, in order: ``did`` given by the caller, the ``controller`` /
    ``id`` of a key-pair JSON, ``did.json`` beside a ``.key`` file, else did:key.
    A ``did`` the key cannot be shown to belong to is refused: a did:key must
    be this key's, and a did:web needs a DID document (``PREFIX.did.json`` or
    the key-pair JSON's controller) that lists this key under assertionMethod.
    """
    raw = read_bytes(path, "key file", 1024 * 1024)
    p = Path(path)
    if did is not None:
        check_did(did, "issuer DID")
    if raw.lstrip().startswith(b"{"):
        doc = parse_json(raw, f"key file ({p})")
        if not isinstance(doc, dict):
            raise UsageError(f"key file ({p}): expected a JSON object with secretKeyMultibase")
        secret = doc.get("secretKeyMultibase") or doc.get("privateKeyMultibase")
        if not isinstance(secret, str):
            public = "verificationMethod" in doc or "assertionMethod" in doc  # keygen's PREFIX.did.json
            hint = f": this is a DID document (public keys only); pass the private key, {_key_beside(p)}" \
                if public else ""
            raise UsageError(f"key file ({p}): expected secretKeyMultibase or privateKeyMultibase{hint}")
        seed = decode_prefixed(secret, ED25519_PRIV_PREFIX, f"key file ({p}) secretKeyMultibase")
        ident = identity_from_seed(seed)
        pub = doc.get("publicKeyMultibase")
        if isinstance(pub, str) and pub != ident.multikey:
            raise UsageError(f"key file ({p}): publicKeyMultibase does not match the secret key")
        controller = doc.get("controller")
        claimed = did or (controller if isinstance(controller, str) else None)
        if claimed is None:
            return ident
        sidecar_json = p.with_name(p.stem + ".did.json")
        side = parse_json(read_bytes(sidecar_json, "DID document"), f"DID document ({sidecar_json})") \
            if sidecar_json.exists() else None
        method = _check_binding(ident, claimed, side if isinstance(side, dict) else None, p)
        return Identity(ident.private, claimed, method)
    try:
        key = serialization.load_pem_private_key(raw, password=None)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"key file ({p}): expected an unencrypted PKCS#8 PEM Ed25519 key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise UsageError(f"key file ({p}): expected an Ed25519 key, found {type(key).__name__}")
    sidecar_doc: dict[str, Any] | None = None
    sidecar = p.with_suffix(".did.json") if p.suffix == ".key" else None
    if sidecar is not None and sidecar.exists():
        loaded = parse_json(read_bytes(sidecar, "DID document"), f"DID document ({sidecar})")
        sidecar_doc = loaded if isinstance(loaded, dict) else None
    pub = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    ident = Identity(key, did_key(pub))
    if did is None and sidecar_doc is not None and isinstance(sidecar_doc.get("id"), str):
        did = sidecar_doc["id"]
    method = _check_binding(ident, did, sidecar_doc, p) if did is not None else None
    return Identity(key, did or did_key(pub), method)


def _check_binding(ident: Identity, did: str, doc: dict[str, Any] | None, path: Path) -> str | None:
    """The method id under which ``did`` lets this key sign; refuse when nothing shows it may.

    A did:key must be this key's own. Any other DID needs its DID document
    beside the key file that lists this key under assertionMethod — a
    controller named inside a key file proves nothing by itself.
    """
    check_did(did, "DID")
    if did.startswith("did:key:"):
        if did != ident.did_key:
            raise UsageError(f"key file ({path}) is the key of {ident.did_key}, not of {did}")
        return None
    if doc is None or doc.get("id") != did:
        raise UsageError(f"cannot show that key file ({path}) belongs to {did}: expected its DID document "
                         f"beside the key ({path.with_name(path.stem + '.did.json').name})")
    for method_id, key in assertion_methods(doc):
        if key == ident.public_bytes:
            return method_id
    raise UsageError(f"key file ({path}) is not an assertionMethod of {did} in its DID document")


def write_identity(prefix: str | Path, ident: Identity) -> tuple[Path, Path]:
    """Write ``PREFIX.key`` (mode 0600, created exclusively) and ``PREFIX.did.json``."""
    key_path = Path(f"{prefix}.key")
    doc_path = Path(f"{prefix}.did.json")
    for p in (key_path, doc_path):
        if p.exists():
            raise UsageError(f"refusing to overwrite existing {p}")
    key_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(ident.pem())
    doc_path.write_text(json.dumps(ident.did_document(), indent=2) + "\n", "utf-8")
    return key_path, doc_path



def _key_beside(p: Path) -> str:
    """The private key file keygen wrote beside a ``PREFIX.did.json`` (the file a user who mixed them up meant)."""
    return str(p.with_name(p.name.removesuffix(".did.json") + ".key")) if p.name.endswith(".did.json") else "PREFIX.key"
