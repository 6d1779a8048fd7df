"""The level credential: W3C VC 2.0 + Open Badges 3.0 ``OpenBadgeCredential`` (pure).

Everything a verifier needs to re-check the level offline is inside the
credential: the rating (unrounded), the gate inputs, the ROM and manifest
digests it is welded to, the benchmark it was earned on, the game records
(by digest, one may be inline) and a revocation entry. It is shaped to
validate against the OB 3.0 AchievementCredential JSON Schema (``proof`` and
``credentialSchema`` as arrays, typed ``result[]``/``evidence[]``,
``credentialStatus.id``) and the VC 2.0 schema.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from acx_oci.crypto import Identity, canonical, check_digest, dataintegrity, sha256_digest
from acx_oci.errors import UsageError
from acx_oci.model.attempt import COOLDOWN_SCOPES, AttemptCount
from acx_oci.model.rating import acx_level, career_tier
from acx_oci.model.statuslist import rfc3339

VC_V2_CONTEXT = "https://www.w3.org/ns/credentials/v2"
OB_CONTEXT = "https://purl.imsglobal.org/spec/ob/v3p0/context-3.0.3.json"
ACX_LEVEL_CONTEXT = "https://acx.dev/ns/level/v1"
CONTEXTS = [VC_V2_CONTEXT, OB_CONTEXT, ACX_LEVEL_CONTEXT]
CREDENTIAL_TYPES = ["VerifiableCredential", "OpenBadgeCredential"]
OB_SCHEMA_URL = "https://purl.imsglobal.org/spec/ob/v3p0/schema/json/ob_v3p0_achievementcredential_schema.json"

def level_for(mu: float, sigma: float) -> tuple[int, str]:
    """(acxLevel, careerTier) from the rating, by the one rule in :mod:`acx_oci.model.rating`."""
    level = acx_level(mu - 3.0 * sigma)
    return level, career_tier(level)


def envelope_bytes(envelope: dict[str, Any]) -> bytes:
    """The canonical (RFC 8785) bytes a game-record envelope is stored and digested as."""
    return canonical(envelope)


def evidence_item(envelope_blob: bytes, *, game: int | None = None, url: str | None = None,
                  inline: dict[str, Any] | None = None, name: str | None = None) -> dict[str, Any]:
    """Reference one game-record envelope by the sha256 of its exact bytes.

    ``inline`` embeds the envelope itself; it must then be the envelope whose
    canonical bytes are ``envelope_blob`` (verification re-derives the digest
    from ``canonical(inline)``).
    """
    digest = sha256_digest(envelope_blob)
    item: dict[str, Any] = {"id": url or f"urn:acx:evidence:{digest}", "type": ["Evidence"]}
    if name or game is not None:
        item["name"] = name or f"game {game}"
    item["acx:digestMultibase"] = digest
    if game is not None:
        item["acx:game"] = game
    if inline is not None:
        if sha256_digest(canonical(inline)) != digest:
            raise UsageError("evidence: the inline envelope is not the envelope whose bytes were given "
                             "(store envelopes as their RFC 8785 bytes)")
        item["acx:dsseEnvelope"] = inline
    return item


def evidence_digest(item: Any) -> str | None:
    """The sha256 digest an evidence item names (``acx:digestMultibase`` or ``acx:digest``)."""
    if not isinstance(item, dict):
        return None
    for key in ("acx:digestMultibase", "acx:digest"):
        value = item.get(key)
        if isinstance(value, str):
            return value
    return None


def _typed_evidence(item: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(item, dict) or evidence_digest(item) is None:
        raise UsageError("evidence items must be objects naming an envelope digest (acx:digestMultibase)")
    types = item.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    if "Evidence" not in types:
        types.append("Evidence")
    return {**item, "type": types}


@dataclass(frozen=True)
class LevelClaim:
    """Everything a level credential says, as one typed value: a misspelt field is a type error, not a KeyError."""

    issuer_did: str
    subject_id: str
    capability_id: str
    rating_mu: float
    rating_sigma: float
    games_played: int
    acx_level: int
    career_tier: str
    pass_rate: float
    rom_digest: str
    manifest_digest: str
    benchmark_id: str
    benchmark_version: str
    benchmark_digest: str
    held_out_slice_digest: str
    evidence: list[dict[str, Any]]
    status_entry: dict[str, Any]
    valid_from: datetime
    valid_until: datetime
    achievement_name: str
    credential_id: str | None = None
    issuer_name: str | None = None
    criteria_narrative: str | None = None
    achievement_description: str | None = None
    solver: str = "reference"  # "rom" (the signed ROM, sandboxed, containment proven) or "reference"
    runtime_digest: str | None = None
    training_cutoff: date | None = None
    qualifying_exams: int | None = None
    # acx:postCutoff {cutoff, source: rom | models-file, qualifying, drawn}: rated games on exams dated after the cutoff
    post_cutoff: dict[str, Any] | None = None
    exam_certification: dict[str, Any] | None = None
    image_digests: list[str] | None = None
    extra: dict[str, Any] | None = None  # further ``acx:`` result fields (attest --baseline, --model-replay)
    # Its place in the (cartridge id, benchmark, capability) history with this verifier (acx:attempt), and which
    # cooldown rule the verifier applied (acx:cooldownScope: "rom" or "rom+claim"); None: not said (older states).
    attempt: AttemptCount | None = None
    cooldown_scope: str | None = None
    # How the verifier settled the previous version (acx:previousVersion, issue 44.1): "named" or "ledger" (it
    # was compared: acx:baseline), "none" (no level of another version), "own-level" (this ROM had one), "replay"
    # (a model replay decides no version); None: not said (issued before 44.1).
    previous_version: str | None = None


def build_level_credential(claim: LevelClaim) -> dict[str, Any]:
    """The unsigned level credential; ratings stay unrounded floats."""
    c = claim
    for value, what in ((c.rom_digest, "ROM digest"), (c.manifest_digest, "manifest digest"),
                        (c.benchmark_digest, "benchmark digest"), (c.held_out_slice_digest, "heldOutSliceDigest")):
        check_digest(value, what)
    if c.valid_until <= c.valid_from:
        raise UsageError("level credential: validUntil must be after validFrom")
    if c.cooldown_scope is not None and c.cooldown_scope not in COOLDOWN_SCOPES:
        raise UsageError(f"level credential: acx:cooldownScope must be one of {', '.join(COOLDOWN_SCOPES)}, "
                         f"found {c.cooldown_scope!r}")
    if not isinstance(c.status_entry, dict) or not isinstance(c.status_entry.get("id"), str):
        raise UsageError("level credential: credentialStatus needs an id (use statuslist.status_entry)")
    issuer: dict[str, Any] = {"id": c.issuer_did, "type": ["Profile"]}
    if c.issuer_name:
        issuer["name"] = c.issuer_name
    narrative = c.criteria_narrative or (
        f"Independently re-executed by {c.issuer_did} on the sealed held-out slice {c.held_out_slice_digest} of "
        f"{c.benchmark_id}@{c.benchmark_version}; TrueSkill rating R = mu - 3 sigma, issued only when sigma < the "
        f"gate's sigmaMax over at least minGames games.")
    result: dict[str, Any] = {
        "type": ["Result"],
        "achievedLevel": c.career_tier,
        "acx:ratingMu": float(c.rating_mu),
        "acx:ratingSigma": float(c.rating_sigma),
        "acx:gamesPlayed": int(c.games_played),
        "acx:acxLevel": int(c.acx_level),
        "acx:careerTier": c.career_tier,
        "acx:passRate": float(c.pass_rate),
        "acx:capabilityId": c.capability_id,
        "acx:cartridgeRomDigest": c.rom_digest,
        "acx:cartridgeManifestDigest": c.manifest_digest,
        "acx:benchmarkId": c.benchmark_id,
        "acx:benchmarkVersion": str(c.benchmark_version),
        "acx:benchmarkDigest": c.benchmark_digest,
        "acx:heldOutSliceDigest": c.held_out_slice_digest,
        # What played: "rom" (the signed ROM, sandboxed, containment proven) or "reference" (a simulation).
        "acx:solver": c.solver,
        **({"acx:runtimeDigest": c.runtime_digest} if c.runtime_digest else {}),
        # Post-cutoff slicing: the model's declared training cutoff (null: none declared) and how many
        # held-out exams were published after it.
        "acx:trainingCutoff": c.training_cutoff.isoformat() if c.training_cutoff else None,
        **({"acx:qualifyingExams": int(c.qualifying_exams)} if c.qualifying_exams is not None else {}),
        **({"acx:postCutoff": dict(c.post_cutoff)} if c.post_cutoff is not None else {}),
        # The benchmark's exam certification: certified (with the referrer's digest and certifier),
        # uncertified-allowed (pushed with --allow-uncertified) or not-exam-form.
        **(c.exam_certification or {}),
        # Environment images: the manifest digests of the root file systems the games ran in (absent: host).
        **({"acx:imageDigests": sorted(set(c.image_digests))} if c.image_digests else {}),
        **({"acx:attempt": c.attempt.to_json()} if c.attempt else {}),
        **({"acx:cooldownScope": c.cooldown_scope} if c.cooldown_scope else {}),
        **({"acx:previousVersion": c.previous_version} if c.previous_version else {}),
        # Further acx: fields (attest --baseline: acx:heldInR and acx:baseline).
        **{k: v for k, v in (c.extra or {}).items() if k.startswith("acx:")},
    }
    return {
        "@context": list(CONTEXTS),
        "id": c.credential_id or f"urn:uuid:{uuid.uuid4()}",
        "type": list(CREDENTIAL_TYPES),
        "name": c.achievement_name,
        "issuer": issuer,
        "validFrom": rfc3339(c.valid_from),
        "validUntil": rfc3339(c.valid_until),
        "credentialSubject": {
            "id": c.subject_id,
            "type": ["AchievementSubject"],
            "achievement": {
                "id": f"urn:acx:achievement:{c.capability_id}:{c.benchmark_id}@{c.benchmark_version}",
                "type": ["Achievement"],
                "name": c.achievement_name,
                "description": c.achievement_description or (
                    f"ACX level for capability {c.capability_id}, earned on benchmark {c.benchmark_id}@"
                    f"{c.benchmark_version} by an independent verifier."),
                "criteria": {"narrative": narrative},
            },
            "result": [result],
        },
        "evidence": [_typed_evidence(e) for e in c.evidence],
        "credentialSchema": [{"id": OB_SCHEMA_URL, "type": "1EdTechJsonSchemaValidator2019"}],
        "credentialStatus": dict(c.status_entry),
    }


def sign_credential(credential: dict[str, Any], signer: Identity, verification_method: str,
                    created: datetime | str) -> dict[str, Any]:
    """Add an eddsa-jcs-2022 proof, always as an array (the OB 3.0 schema wants one)."""
    when = created if isinstance(created, str) else rfc3339(created)
    return dataintegrity.sign(credential, signer, verification_method, when, as_array=True)


def issue(claim: LevelClaim, signer: Identity, verification_method: str | None = None,
          created: datetime | None = None) -> dict[str, Any]:
    """Build and sign a level credential; ``created`` defaults to ``valid_from``."""
    return sign_credential(build_level_credential(claim), signer, verification_method or signer.verification_method,
                           created or claim.valid_from)


def level_result(credential: Any) -> dict[str, Any] | None:
    """The ``result[]`` entry carrying the acx level fields, if any."""
    if not isinstance(credential, Mapping):
        return None
    subject = credential.get("credentialSubject")
    if isinstance(subject, list):
        subject = subject[0] if subject else None
    if not isinstance(subject, dict):
        return None
    results = subject.get("result")
    for item in results if isinstance(results, list) else []:
        if isinstance(item, dict) and "acx:cartridgeRomDigest" in item:
            return item
    return None


def issuer_id(credential: Any) -> str | None:
    """The issuer's id, whether ``issuer`` is a string or an object."""
    issuer = credential.get("issuer") if isinstance(credential, Mapping) else None
    if isinstance(issuer, dict):
        issuer = issuer.get("id")
    return issuer if isinstance(issuer, str) else None


def status_entries(credential: Any) -> list[dict[str, Any]]:
    """Every ``BitstringStatusListEntry`` in ``credentialStatus`` (object or array)."""
    status = credential.get("credentialStatus") if isinstance(credential, Mapping) else None
    items = status if isinstance(status, list) else [status] if status is not None else []
    return [s for s in items if isinstance(s, dict) and s.get("type") == "BitstringStatusListEntry"]


def credential_attempt(credential: Any) -> AttemptCount | None:
    """The credential's ``acx:attempt`` (None: absent or malformed - a credential from before attempts counted)."""
    return AttemptCount.from_json((level_result(credential) or {}).get("acx:attempt"))
