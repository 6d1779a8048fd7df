"""The ROM: its canonical manifest, its signature, and what a signature check concludes (pure).

The ROM manifest is RFC 8785 canonical JSON; its sha256 is the ROM digest and
the ROM layer *is* those bytes, so the ROM digest is the same wherever the
cartridge lives. The ROM signature is a DSSE envelope over an in-toto
Statement whose subject is the ROM digest. The SAVE zone (``save.json``) is
outside the ROM: editing it changes the manifest digest, never the ROM digest.

Nothing a cartridge says about itself is trusted: the signature status comes
from re-hashing the ROM and checking the signature against the signer's key,
and "valid" needs the signer to be a publisher in the caller's trust file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from acx_oci import reasons
from acx_oci.crypto import (
    PAYLOAD_TYPE_INTOTO,
    Identity,
    canonical,
    did_key,
    ed25519_public_from_multikey,
    envelope_payload,
    public_from_did_key,
    sha256_digest,
    sign_envelope,
    statement,
    statement_bytes,
    subject_for_digest,
    verify_envelope,
)
from acx_oci.errors import AcxError, VerificationError
from acx_oci.jsonio import as_array, as_object, parse_json, validate
from acx_oci.model.capability import CapabilityRecord
from acx_oci.trust import Trust
from acx_oci.trust import did as didmod

MEDIA_ROM = "application/vnd.acx.cartridge.rom.v1+json"
MEDIA_ROM_FILE = "application/vnd.acx.cartridge.file.v1"
MEDIA_SAVE = "application/vnd.acx.cartridge.save.v1+json"
ROM_SCHEMA_VERSION = "acx.rom/1"
PREDICATE_ROM_SIGNATURE = "https://acx.dev/attestation/rom-signature/v1"
ANN_ID = "dev.acx.cartridge.id"
ANN_VERSION = "dev.acx.cartridge.version"
ANN_ROM = "dev.acx.cartridge.rom-digest"
MAX_ROM_BYTES = 4 * 1024 * 1024
MAX_ROM_FILES = 10_000
#: What a verifier materialises of one ROM's files at most (sum of the signed sizes).
MAX_ROM_FILES_TOTAL = 64 * MAX_ROM_BYTES
MAX_SAVE_BYTES = 16 * 1024 * 1024

STATUS_VALID = "valid"
STATUS_WARNING = "warning"
STATUS_TAMPERED = reasons.TAMPERED
STATUS_UNSIGNED = "unsigned"

# The runtime contract's limits: defaults when the ROM names none, and the schema's maxima.
RUNTIME_DEFAULTS = {"timeSeconds": 60.0, "memoryMiB": 1024, "pids": 128, "diskMiB": 512}
RUNTIME_MAXIMA = {"timeSeconds": 3600.0, "memoryMiB": 16384, "pids": 4096, "diskMiB": 65536}


def version_key(version: str | None) -> tuple[int, ...] | None:
    """A cartridge version's order (its leading dotted numbers, an optional ``v``); None when it has none."""
    m = re.match(r"^v?(\d+(?:\.\d+)*)", version or "")
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def runtime_of(rom: dict[str, Any]) -> dict[str, Any] | None:
    """The ROM's signed runtime contract (``command``, ``env``, ``limits``, ``network``), or None."""
    runtime = rom.get("runtime")
    return runtime if isinstance(runtime, dict) else None


def training_cutoff(rom: dict[str, Any]) -> date | None:
    """The ROM's declared model training cutoff; ``none`` or nothing declared means no trained model (None)."""
    runtime = runtime_of(rom) or {}
    value = (runtime.get("model") or {}).get("trainingCutoff")
    if not isinstance(value, str) or value == "none":
        return None
    return date.fromisoformat(value)


def runtime_digest(runtime: dict[str, Any]) -> str:
    """sha256 of the runtime's JCS: names exactly what ran, and is inside the ROM digest too."""
    return sha256_digest(canonical(runtime))


def runtime_limits(runtime: dict[str, Any]) -> dict[str, Any]:
    """The effective limits: the ROM's own, else the documented defaults, never above the maxima."""
    given = runtime.get("limits") or {}
    return {k: min(type(v)(given.get(k, v)), RUNTIME_MAXIMA[k]) for k, v in RUNTIME_DEFAULTS.items()}


def status_display(status: str) -> str:
    """How a signature status is shown to people (issue 34): ``intact, trusted`` / ``intact, untrusted`` (the
    signer is not in the trust file: the bytes are whole, the signer unknown), never "warning" beside a pass."""
    return {STATUS_VALID: "intact, trusted", STATUS_WARNING: "intact, untrusted"}.get(status, status)


@dataclass(frozen=True)
class CartridgeSource:
    """A cartridge directory read into memory: identity, capabilities, files, SAVE."""

    spec: dict[str, Any]  # cartridge.yaml, validated
    capabilities: tuple[CapabilityRecord, ...]
    files: tuple[tuple[str, bytes], ...]  # (posix path under the cartridge dir, bytes), sorted
    save: bytes


def build_rom(source: CartridgeSource, controller: str) -> bytes:
    """The canonical ROM manifest bytes: identity, capabilities, policy, files by digest."""
    rom = {
        "schemaVersion": ROM_SCHEMA_VERSION,
        "id": source.spec["id"],
        "version": source.spec["version"],
        "controller": controller,
        "capabilities": [c.to_json() for c in source.capabilities],
        "policy": source.spec.get("policy") or {},
        **({"runtime": source.spec["runtime"]} if source.spec.get("runtime") is not None else {}),
        "files": [{"path": path, "digest": sha256_digest(data), "size": len(data)} for path, data in source.files],
    }
    validate(rom, "rom.schema.json", "ROM manifest")
    return canonical(rom)


def sign_rom(rom_bytes: bytes, rom: dict[str, Any], signer: Identity) -> bytes:
    """DSSE envelope (JSON bytes) over an in-toto Statement whose subject is the ROM digest."""
    st = statement(
        [subject_for_digest(f"{rom['id']}@{rom['version']}", sha256_digest(rom_bytes))],
        PREDICATE_ROM_SIGNATURE,
        {"signer": signer.did, "signerKey": signer.multikey, "controller": rom["controller"]},
    )
    env = sign_envelope(statement_bytes(st), PAYLOAD_TYPE_INTOTO, signer)
    return canonical(env)


@dataclass(frozen=True)
class SignatureCheck:
    """What checking a ROM's signature concluded; ``signer`` is only ever the verified signer, never a claim."""

    status: str  # valid | warning | tampered | unsigned
    signer: str | None  # the signer as *verified*: a trusted DID, a did:key, or did:key of the key used
    reason: str
    key: bytes | None = None  # the Ed25519 key the signature verified with
    claimed_signer: str | None = None  # what the signature says about itself when that could not be checked

    @property
    def display(self) -> str:
        """The status as shown to people (``status_display``)."""
        return status_display(self.status)


def check_signature(rom_bytes: bytes, envelope_bytes: bytes | None, trust: Trust | None) -> SignatureCheck:
    """Status of the ROM signature. Pure: the trust file supplies every key it trusts.

    A signer's *name* is only believed when it can be checked: a trusted
    publisher (keys from the trust file) or a did:key (the key is the name).
    Any other claimed DID is reported as the did:key of the key that actually
    signed, so independence checks compare keys, not labels the signer chose.
    """
    if envelope_bytes is None:
        return SignatureCheck(STATUS_UNSIGNED, None, "no ROM signature layer")
    rom_digest = sha256_digest(rom_bytes)
    claimed: str | None = None
    try:
        envelope = parse_json(envelope_bytes, "ROM signature")
        _, payload = envelope_payload(envelope)
        st = parse_json(payload, "ROM signature statement")
        if not isinstance(st, dict) or st.get("predicateType") != PREDICATE_ROM_SIGNATURE:
            return SignatureCheck(STATUS_TAMPERED, None, "signature is not a ROM-signature statement")
        digests = {"sha256:" + str(as_object(s.get("digest")).get("sha256"))
                   for s in as_array(st.get("subject")) if isinstance(s, dict)}
        pred = as_object(st.get("predicate"))
        claimed = pred.get("signer")
        if not isinstance(claimed, str):
            return SignatureCheck(STATUS_TAMPERED, None, "signature names no signer")
        if rom_digest not in digests:
            return SignatureCheck(STATUS_TAMPERED, None, f"signature covers a different ROM (not {rom_digest})")
        trusted = trust is not None and trust.is_trusted_publisher(claimed)
        if trusted:
            keys = [k for _, k in didmod.assertion_keys(claimed, trust)]
        elif claimed.startswith("did:key:"):
            keys = [public_from_did_key(claimed)]
        else:
            keys = [ed25519_public_from_multikey(str(pred.get("signerKey")))]
        _, _, key = verify_envelope(envelope, keys)
    except VerificationError as exc:
        return SignatureCheck(STATUS_TAMPERED, None, str(exc), claimed_signer=claimed)
    except AcxError as exc:
        return SignatureCheck(STATUS_TAMPERED, None, f"malformed signature: {exc}", claimed_signer=claimed)
    if trusted:
        return SignatureCheck(STATUS_VALID, claimed, "intact; signer is a trusted publisher", key)
    if claimed.startswith("did:key:"):
        return SignatureCheck(STATUS_WARNING, claimed, "intact; signer is not in your trust file", key)
    return SignatureCheck(STATUS_WARNING, did_key(key),
                          f"intact; signed by {did_key(key)}, which claims to be {claimed} (unverified: "
                          "not a publisher in your trust file)", key, claimed)


