"""A2A AgentCard for a cartridge: one AgentSkill per capability record.

A2A's AgentSkill has no proficiency or evidence field, so the full records,
with the proficiency *resolved from attestations* (never the stored boolean),
travel under the extension ``https://acx.dev/a2a/ext/capability/v1``. The
optional signature is a JWS (EdDSA) over the RFC 8785 bytes of the card
without ``signatures``, with a detached payload.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from acx_oci.crypto import Identity, canonical, verify_ed25519
from acx_oci.jsonio import as_array, loads
from acx_oci.model.resolution import VERIFIED, AcceptedCredential, Resolution
from acx_oci.model.rom import status_display

EXTENSION_URI = "https://acx.dev/a2a/ext/capability/v1"
PROTOCOL_VERSION = "1.0"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def provider_for(cartridge_id: str) -> dict[str, str]:
    """``io.github.acme/dag-agent`` -> organization ``acme``, url ``https://acme.github.io``."""
    domain_part = cartridge_id.split("/", 1)[0]
    labels = [x for x in domain_part.split(".") if x]
    host = ".".join(reversed(labels))
    org = labels[-1] if labels else cartridge_id
    return {"organization": org, "url": f"https://{host}"}


def level_word(solver: str) -> str:
    """The one vocabulary (issue 34): VERIFIED for the signed ROM's level, SIMULATED for an accepted simulation."""
    return "VERIFIED" if solver == "rom" else "SIMULATED"


def level_phrase(acc: AcceptedCredential) -> str:
    """``SIMULATED level 31 (principal) by ISSUER on BENCH@VERSION (solver: reference)``: policy check's words."""
    return (f"{level_word(acc.solver)} level {acc.acx_level} ({acc.career_tier}) by {acc.issuer} on "
            f"{acc.benchmark_id}@{acc.benchmark_version}" + ("" if acc.solver == "rom" else f" (solver: {acc.solver})"))


def sig_of(status: str) -> str:
    """``signature: intact, untrusted``: the signature line's words (no "warning" beside a pass)."""
    return f"signature: {status_display(status)}"


#: Why a card without ``--url`` has no ``url``: A2A's is the agent's service endpoint, which only its publisher knows.
NO_URL = "no A2A endpoint was given (agent-card --url): a registry reference is not one"


def build_agent_card(resolution: Resolution, rom: dict[str, Any], reference: str,
                     url: str | None = None) -> dict[str, Any]:
    """The A2A AgentCard for a resolved cartridge: one skill per capability, with its verified level as evidence.

    ``url`` is the agent's A2A endpoint as its publisher gives it; a registry or layout reference is not one (for
    a layout it published a local path), so without ``url`` the card has none and its acx extension says why
    (``urlOmitted``); the cartridge's reference is ``params.reference``."""
    cid = str(rom.get("id"))
    skills = []
    records = []
    for cap in resolution.capabilities:
        rec = cap.capability.to_json()
        b = cap.best
        rec["proficiency"] = {
            "score": b.acx_level if b else None,
            "verified": cap.effective == VERIFIED,
            "evidenceRefs": [b.attestation_digest, b.credential_digest] if b else [],
        }
        if b:
            rec["proficiency"].update({"careerTier": b.career_tier, "mu": b.mu, "sigma": b.sigma,
                                       "issuer": b.issuer, "benchmark": f"{b.benchmark_id}@{b.benchmark_version}",
                                       # issue 34: a level accepted only because simulations are allowed says so
                                       "solver": b.solver, "simulated": b.solver != "rom"})
        records.append(rec)
        tags = [cap.capability.task_type, *cap.capability.stack]
        if cap.capability.domain:
            tags.append(cap.capability.domain)
        skills.append({
            "id": cap.capability.id,
            "name": cap.capability.display(),
            "description": (f"{cap.capability.task_type} on {', '.join(cap.capability.stack) or 'any stack'}"
                            + (f" ({cap.capability.domain})" if cap.capability.domain else "")
                            + (f"; {level_word(b.solver)} {b.career_tier} by {b.issuer}"
                               + ("" if b.solver == "rom" else f" (solver: {b.solver})") if b
                               else "; NOT VERIFIED")),
            "tags": tags,
        })
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "name": cid,
        "description": f"ACX cartridge {cid}@{rom.get('version')} (ROM {resolution.rom_digest})",
        **({"url": url} if url else {}),
        "version": str(rom.get("version")),
        "provider": provider_for(cid),
        "capabilities": {
            "streaming": False,
            "pushNotifications": False,
            "extensions": [{"uri": EXTENSION_URI, "required": False,
                            "description": "ACX capability records with resolved, verified proficiency",
                            "params": {"romDigest": resolution.rom_digest,
                                       "manifestDigest": resolution.manifest_digest, "records": records,
                                       "replayed": resolution.replayed,
                                       **({} if url else {"urlOmitted": NO_URL})}}],
        },
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills,
    }


def sign_agent_card(card: dict[str, Any], signer: Identity) -> dict[str, Any]:
    """Add ``signatures[]``: a detached-payload JWS (EdDSA) over JCS(card without signatures)."""
    body = {k: v for k, v in card.items() if k != "signatures"}
    header = {"alg": "EdDSA", "typ": "JOSE", "kid": signer.verification_method}
    protected = _b64url(json.dumps(header, separators=(",", ":")).encode("utf-8"))
    signing_input = protected.encode("ascii") + b"." + _b64url(canonical(body)).encode("ascii")
    sig = _b64url(signer.sign(signing_input))
    return {**body, "signatures": [{"protected": protected, "signature": sig}]}


def verify_agent_card(card: dict[str, Any], public_key: bytes) -> bool:
    """True if any signature entry verifies under ``public_key``; a malformed entry counts as not verifying."""
    body = {k: v for k, v in card.items() if k != "signatures"}
    entries = card.get("signatures")
    for entry in entries if isinstance(entries, list) else []:
        try:
            signing_input = entry["protected"].encode("ascii") + b"." + _b64url(canonical(body)).encode("ascii")
            if verify_ed25519(public_key, _b64url_decode(entry["signature"]), signing_input):
                return True
        except (KeyError, AttributeError, ValueError, TypeError):  # a malformed entry verifies nothing
            continue
    return False


def card_signers(card: Any) -> list[str]:
    """The ``kid`` of every signature's protected header (a DID URL), in order; malformed entries are skipped."""
    kids = []
    for entry in as_array(card.get("signatures")) if isinstance(card, dict) else []:  # (5 is no list: skipped)
        try:
            header = loads(_b64url_decode(entry["protected"]), "JWS header", ijson=False)
        except (KeyError, TypeError, AttributeError, ValueError):
            continue
        if isinstance(header, dict) and header.get("alg") == "EdDSA" and isinstance(header.get("kid"), str):
            kids.append(header["kid"])
    return kids


def verify_signed_by(card: dict[str, Any], kid: str, public_keys: list[bytes]) -> bool:
    """Whether a signature whose header names ``kid`` verifies under one of ``public_keys``."""
    body = {k: v for k, v in card.items() if k != "signatures"}
    for entry in as_array(card.get("signatures")):
        try:
            header = loads(_b64url_decode(entry["protected"]), "JWS header", ijson=False)
            if not isinstance(header, dict) or header.get("kid") != kid or header.get("alg") != "EdDSA":
                continue
            signing_input = entry["protected"].encode("ascii") + b"." + _b64url(canonical(body)).encode("ascii")
            signature = _b64url_decode(entry["signature"])
        except (KeyError, TypeError, AttributeError, ValueError):
            continue
        if any(verify_ed25519(key, signature, signing_input) for key in public_keys):
            return True
    return False
