"""W3C Data Integrity proofs with the ``eddsa-jcs-2022`` cryptosuite (pure).

JCS (RFC 8785) instead of RDF canonicalization keeps us free of JSON-LD
processing: what is signed is exactly the JSON we read. The message is
``sha256(JCS(proof config)) || sha256(JCS(document without proof))`` — proof
hash first, no further hashing — and the proof config carries the
document's ``@context``. ``proof`` may be one object or an array (a proof set);
every proof in it is checked independently.

Cryptosuites live in a small table (:data:`CRYPTOSUITES`) so another suite can
be added without touching the create/verify flow.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from acx_oci import reasons
from acx_oci.crypto.jcs import canonical
from acx_oci.crypto.keys import Identity, b58decode, b58encode, verify_ed25519
from acx_oci.errors import AcxError, DidError, UsageError
from acx_oci.timeutil import DATETIME_RE, parse_datetime

PROOF_TYPE = "DataIntegrityProof"

KeyResolver = Callable[[str], "bytes | Sequence[bytes]"]


@dataclass(frozen=True)
class Cryptosuite:
    """How one suite canonicalizes, hashes, signs and verifies."""

    name: str
    canonicalize: Callable[[Any], bytes]
    hash: Callable[[bytes], bytes]
    sign: Callable[[Identity, bytes], bytes]
    verify: Callable[[bytes, bytes, bytes], bool]


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


CRYPTOSUITES: dict[str, Cryptosuite] = {
    "eddsa-jcs-2022": Cryptosuite(
        name="eddsa-jcs-2022",
        canonicalize=canonical,
        hash=_sha256,
        sign=lambda signer, message: signer.sign(message),
        verify=verify_ed25519,
    ),
}


@dataclass(frozen=True)
class ProofResult:
    """Outcome of checking one proof; ``code`` is a stable reason code when not ok."""

    ok: bool
    verification_method: str | None
    cryptosuite: str | None
    code: str
    message: str


def proofs_of(document: dict[str, Any]) -> list[Any]:
    """``proof`` as a list (object -> one element; absent -> empty)."""
    proof = document.get("proof")
    if proof is None:
        return []
    return list(proof) if isinstance(proof, list) else [proof]


def without_proof(document: dict[str, Any]) -> dict[str, Any]:
    """The unsecured document: what a proof signs over, and what a re-signer starts from."""
    return {k: v for k, v in document.items() if k != "proof"}


def proof_configuration(document: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """Proof options minus ``proofValue``, plus the document's ``@context`` when it has one."""
    config = {k: v for k, v in options.items() if k != "proofValue"}
    if "@context" in document:
        config["@context"] = document["@context"]
    return config


def hash_data(unsecured: dict[str, Any], config: dict[str, Any], suite: str = "eddsa-jcs-2022") -> bytes:
    """The 64-byte signing input: hash(canon(config)) || hash(canon(document))."""
    cs = _suite(suite)
    return cs.hash(cs.canonicalize(config)) + cs.hash(cs.canonicalize(unsecured))


def _suite(name: str) -> Cryptosuite:
    cs = CRYPTOSUITES.get(name)
    if cs is None:
        raise UsageError(f"unsupported cryptosuite {name!r} (supported: {', '.join(sorted(CRYPTOSUITES))})")
    return cs


def create_proof(document: dict[str, Any], signer: Identity, verification_method: str, created: str | None,
                 proof_purpose: str = "assertionMethod", cryptosuite: str = "eddsa-jcs-2022") -> dict[str, Any]:
    """Return the proof object (with ``@context`` and ``proofValue``) for ``document``."""
    if not isinstance(document, dict):
        raise UsageError("Data Integrity: the document to sign must be a JSON object")
    if created is not None and not DATETIME_RE.match(created):
        raise UsageError(f"Data Integrity: created must be an XML Schema dateTime (RFC 3339), found {created!r}")
    cs = _suite(cryptosuite)
    unsecured = without_proof(document)
    options: dict[str, Any] = {"type": PROOF_TYPE, "cryptosuite": cs.name}
    if created is not None:
        options["created"] = created
    options["verificationMethod"] = verification_method
    options["proofPurpose"] = proof_purpose
    config = proof_configuration(unsecured, options)
    signature = cs.sign(signer, hash_data(unsecured, config, cs.name))
    return {**config, "proofValue": b58encode(signature)}


def sign(document: dict[str, Any], signer: Identity, verification_method: str, created: str | None,
         *, proof_purpose: str = "assertionMethod", as_array: bool = False,
         cryptosuite: str = "eddsa-jcs-2022") -> dict[str, Any]:
    """Return a copy of ``document`` secured with one more proof.

    An existing proof is kept and the new one appended (a proof set, each
    over the document without proofs); ``as_array`` forces the array form
    the OB 3.0 schema wants even for a single proof.
    """
    proof = create_proof(document, signer, verification_method, created, proof_purpose, cryptosuite)
    existing = proofs_of(document)
    secured = without_proof(document)
    if existing or as_array:
        secured["proof"] = [*existing, proof]
    else:
        secured["proof"] = proof
    return secured


def _fail(proof: Any, code: str, message: str) -> ProofResult:
    vm = proof.get("verificationMethod") if isinstance(proof, dict) else None
    suite = proof.get("cryptosuite") if isinstance(proof, dict) else None
    return ProofResult(False, vm if isinstance(vm, str) else None, suite if isinstance(suite, str) else None,
                       code, message)


def verify_proof(document: dict[str, Any], proof: Any, resolve_key: KeyResolver,
                 expected_purpose: str | None = "assertionMethod", now: datetime | None = None) -> ProofResult:
    """Check one proof of ``document`` (vc-di-eddsa §3.3.2 for eddsa-jcs-2022)."""
    if not isinstance(proof, dict):
        return _fail(proof, reasons.PROOF_INVALID, "a proof must be a JSON object")
    if proof.get("type") != PROOF_TYPE:
        return _fail(proof, reasons.PROOF_INVALID, f"proof type must be {PROOF_TYPE}, found {proof.get('type')!r}")
    suite_name = proof.get("cryptosuite")
    if not isinstance(suite_name, str) or suite_name not in CRYPTOSUITES:
        return _fail(proof, reasons.PROOF_INVALID, f"unsupported cryptosuite {suite_name!r}")
    cs = CRYPTOSUITES[suite_name]
    vm = proof.get("verificationMethod")
    if not isinstance(vm, str):
        return _fail(proof, reasons.PROOF_INVALID, "the proof has no verificationMethod")
    if expected_purpose is not None and proof.get("proofPurpose") != expected_purpose:
        return _fail(proof, reasons.PROOF_INVALID,
                     f"proofPurpose must be {expected_purpose}, found {proof.get('proofPurpose')!r}")
    created = proof.get("created")
    if created is not None and (not isinstance(created, str) or not DATETIME_RE.match(created)):
        return _fail(proof, reasons.PROOF_INVALID, f"proof created is not a dateTime: {str(created)[:40]!r}")
    expires = proof.get("expires")
    if expires is not None and now is not None:
        expiry = parse_datetime(expires)
        if expiry is None:
            return _fail(proof, reasons.PROOF_INVALID, "proof expires is not a dateTime")
        if expiry <= now:
            return _fail(proof, reasons.PROOF_INVALID, f"the proof expired at {expires}")
    value = proof.get("proofValue")
    if not isinstance(value, str):
        return _fail(proof, reasons.PROOF_INVALID, "the proof has no proofValue")
    try:
        signature = b58decode(value, "proofValue")
    except UsageError as exc:
        return _fail(proof, reasons.PROOF_INVALID, str(exc))
    if len(signature) != 64:
        return _fail(proof, reasons.PROOF_INVALID, f"proofValue must decode to 64 bytes, found {len(signature)}")

    unsecured = without_proof(document)
    options = {k: v for k, v in proof.items() if k != "proofValue"}
    if "@context" in options:
        doc_ctx = _as_list(document.get("@context"))
        proof_ctx = _as_list(options["@context"])
        if doc_ctx[: len(proof_ctx)] != proof_ctx:
            return _fail(proof, reasons.PROOF_INVALID,
                         "the document's @context does not start with the proof's @context")
        unsecured["@context"] = options["@context"]
    try:
        message = cs.hash(cs.canonicalize(options)) + cs.hash(cs.canonicalize(unsecured))
    except UsageError as exc:
        return _fail(proof, reasons.PROOF_INVALID, str(exc))

    try:
        resolved = resolve_key(vm)
    except AcxError as exc:
        return _fail(proof, exc.code if isinstance(exc, DidError) else reasons.PROOF_INVALID, str(exc))
    keys = [resolved] if isinstance(resolved, bytes) else list(resolved)
    if not any(cs.verify(key, signature, message) for key in keys):
        return _fail(proof, reasons.PROOF_INVALID, f"the {suite_name} signature does not verify with {vm}")
    return ProofResult(True, vm, suite_name, "ok", f"{suite_name} proof by {vm} verifies")


def verify(document: dict[str, Any], resolve_key: KeyResolver, expected_purpose: str | None = "assertionMethod",
           now: datetime | None = None) -> list[ProofResult]:
    """Check every proof; the document is secured iff the list is non-empty and all are ok."""
    if not isinstance(document, dict):
        return [ProofResult(False, None, None, reasons.PROOF_INVALID, "the document is not a JSON object")]
    proofs = proofs_of(document)
    if not proofs:
        return [ProofResult(False, None, None, reasons.PROOF_MISSING, "the document has no proof")]
    return [verify_proof(document, p, resolve_key, expected_purpose, now) for p in proofs]


def all_ok(results: Sequence[ProofResult]) -> bool:
    """True only if there is at least one proof and every one verified: an empty list never passes."""
    return bool(results) and all(r.ok for r in results)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]
