"""Level-credential verification: every check runs, every failure is reported.

A verifier that stops at the first failure tells a forger which lock to pick
next and tells an operator only half the story, so each rule is its own
:class:`Check` with a stable reason ``code`` and one sentence. The one exception
is the schema: a document that is not a level credential gets that verdict
(``schema_invalid``) and its proof's, since every other rule would only restate
it. Everything is passed in — trust, ``now``, the status-list document,
evidence bytes — so the same inputs always give the same verdict, offline. Keys resolve from the trust
file, did:key and the did:web documents the judge asked the caller for (``resolve_keys`` is that pure
lookup, :class:`acx_oci.evaluation.did_documents.DidDocuments`); this package does no I/O.

Reason codes (stable): ``schema_invalid``, ``proof_missing``, ``proof_invalid``,
``did_unresolvable``, ``method_not_authorized``, ``issuer_key_mismatch``,
``issuer_untrusted``, ``self_issued``, ``sigma_gate``, ``games_gate``,
``level_inconsistent``, ``rom_mismatch``, ``manifest_mismatch``,
``benchmark_not_accepted``, ``held_out_mismatch``, ``not_yet_valid``,
``expired``, ``status_unknown``, ``status_invalid``, ``status_stale``,
``revoked``, ``suspended``, ``evidence_mismatch``, ``evidence_signature``, ``solver_not_accepted``,
``capability_mismatch`` (the trust file's ``benchmarks[].capability`` is not the credential's capability;
resolve also uses it when a credential is offered for a claim it is not about).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from acx_oci import reasons
from acx_oci.errors import AcxError
from acx_oci.evaluation import seed_rules
from acx_oci.evaluation.checks import (
    Check,
    KeyResolver,
    VerifyContext,
    VerifyResult,
    bad,
    base,
    check_proofs,
    ok,
    resolver,
    skip,
)
from acx_oci.evaluation.evidence_check import check_evidence
from acx_oci.evaluation.status_check import check_status
from acx_oci.jsonio import first_error
from acx_oci.model import LevelCredential, level_for, level_result, parse_capability
from acx_oci.timeutil import parse_datetime
from acx_oci.trust import DEFAULT_MIN_GAMES, DEFAULT_SIGMA_MAX, DEFAULT_SOLVERS, AcceptedBenchmark, Trust


def _door(credential: Any) -> LevelCredential | None:
    """A door for documents already parsed (a fuzzer's, a test's): the credential, or None when not an object."""
    if isinstance(credential, LevelCredential):
        return credential
    return LevelCredential.document(credential) if isinstance(credential, dict) else None


def verify_proof_only(credential: Any, ctx: VerifyContext) -> VerifyResult:
    """Proof alone (no trust file): every level rule is reported as skipped, not passed silently."""
    cred = _door(credential)
    if cred is None:
        return VerifyResult([bad("schema", reasons.SCHEMA_INVALID, "the credential is not a JSON object")])
    checks = check_proofs(cred.to_json(), resolver(ctx), ctx.now)
    for name in ("issuer_trusted", "self_issuance", "gates", "bindings", "benchmark_accepted",
                 "validity", "status", "evidence"):
        checks.append(skip(name, "not checked without a trust file"))
    return VerifyResult(checks)


def proof_only(credential: Any, now: datetime, resolve_keys: KeyResolver | None = None) -> VerifyResult:
    """:func:`verify_proof_only` with keys from ``resolve_keys`` (else did:key only): ``vc verify`` without a trust
    file, and a verifier checking its own folder before it publishes."""
    return verify_proof_only(credential, VerifyContext(trust=None, now=now, resolve_keys=resolve_keys))


# --------------------------------------------------------------------------- the level rules

def verify_level_credential(credential: Any, ctx: VerifyContext, *, proof_known: bool = False) -> VerifyResult:
    """Run every level rule on ``credential`` and report each one.

    ``proof_known``: the caller verified these exact bytes' proof (and their inline game records' signatures)
    before, with the keys the proof names now (the consumer's verdict cache): no signature is checked again.
    Every other rule runs, since they depend on ``now``, the status list and the cartridge.
    """
    cred = _door(credential)
    if cred is None:
        return VerifyResult([bad("schema", reasons.SCHEMA_INVALID, "the credential is not a JSON object")])
    doc = cred.to_json()  # (one copy: the schema and the proofs' JCS are over the document as parsed)
    schema = _schema_check(doc)
    resolve = resolver(ctx)
    if not schema.ok:
        # Not a level credential: the level rules would only restate the schema's complaint (fourteen
        # codes quoting None). The schema's message is the verdict; the proof alone still says whether
        # the document is intact (proof_missing / proof_invalid), integrity before content.
        return VerifyResult([schema, *check_proofs(doc, resolve, ctx.now)])
    checks: list[Check] = [schema]
    issuer = cred.issuer
    proof_known = proof_known and not _expiring(cred)
    checks += known_proof_checks(cred, issuer) if proof_known else check_proofs(doc, resolve, ctx.now, issuer=issuer)
    checks.append(_check_issuer_trusted(issuer, ctx.trust))
    checks.append(_check_self_issuance(cred, issuer, ctx, resolve))
    res = level_result(doc) or {}
    checks += _check_gates(res, ctx.trust)
    checks += _check_bindings(res, ctx)
    checks += _check_benchmark(res, ctx.trust)
    checks.append(_check_solver(res, ctx.trust))
    checks += seed_rules.regression(res, ctx.trust)
    checks += seed_rules.classification(res, ctx.trust)
    checks += seed_rules.relaxations(res, ctx.trust)
    checks += seed_rules.promotion(res, ctx.trust)
    checks += _check_model(res, ctx.trust)
    checks += _check_validity(cred, ctx.now)
    checks += check_status(cred, issuer, ctx, resolve)
    # inline records are part of the credential's bytes; supplied ones (--check-evidence) are verified every time
    inline_known = proof_known and ctx.evidence is None
    checks += check_evidence(cred, res, issuer, ctx, resolve, signatures_known=inline_known)
    return VerifyResult(checks)


def _expiring(credential: LevelCredential) -> bool:
    """A proof with ``expires`` depends on ``now``: its verdict is never taken from a cache."""
    return any(not isinstance(p, dict) or "expires" in p for p in credential.proofs)


def known_proof_checks(credential: LevelCredential, issuer: str | None) -> list[Check]:
    """The proof checks of a credential whose proof verified before (same bytes, same keys): no crypto."""
    methods = [p.get("verificationMethod") for p in credential.proofs if isinstance(p, dict)]
    foreign = [m for m in methods if not isinstance(m, str) or base(m) != issuer]
    checks = [ok("proof", f"proof by {', '.join(map(str, methods))} verified before with the same keys "
                          "(consumer verdict cache)")]
    if not methods or foreign:
        checks.append(bad("proof_issuer", reasons.ISSUER_KEY_MISMATCH,
                          f"the proof is by {', '.join(map(str, foreign)) or 'nobody'}, not by a key of the issuer "
                          f"{issuer}"))
    else:
        checks.append(ok("proof_issuer", f"signed by the issuer's own key ({', '.join(map(str, methods))})"))
    return checks


def check_schema(credential: LevelCredential) -> Check:
    """The level-credential schema, as one check (``schema_invalid`` names where and why)."""
    return _schema_check(credential.to_json())


def _schema_check(document: dict[str, Any]) -> Check:
    error = first_error(document, "level-credential.schema.json")
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return bad("schema", reasons.SCHEMA_INVALID, f"not a level credential: at {where}: {error.message[:200]}")
    return ok("schema", "VC 2.0 structure and acx level fields present")


def _check_issuer_trusted(issuer: str | None, trust: Trust | None) -> Check:
    if trust is None:
        return skip("issuer_trusted", "no trust file: the issuer's trustworthiness was not checked")
    if issuer and trust.is_trusted_verifier(issuer):
        return ok("issuer_trusted", f"issuer {issuer} is a trusted verifier")
    return bad("issuer_trusted", reasons.ISSUER_UNTRUSTED, f"issuer {issuer} is not a verifier in the trust file")


def _party_keys(did_value: str | None, resolve: KeyResolver) -> set[bytes]:
    """The Ed25519 keys a DID can sign with (empty when it cannot be resolved offline)."""
    if not did_value:
        return set()
    try:
        return {key for _, key in resolve(did_value)}
    except AcxError:
        return set()


def _check_self_issuance(credential: LevelCredential, issuer: str | None, ctx: VerifyContext,
                         resolve: KeyResolver) -> Check:
    """Independence by name *and* by key: did:web:V and did:key:K are one party when V signs with K."""
    subject = credential.subject_id
    parties = {"the credential subject": base(subject), "the cartridge controller": base(ctx.cartridge_controller),
               "the ROM signer": base(ctx.rom_signer)}
    hits = [what for what, value in parties.items() if value is not None and value == issuer]
    if issuer is None:
        return bad("self_issuance", reasons.SELF_ISSUED, "the credential names no issuer, so independence cannot hold")
    issuer_keys = _party_keys(issuer, resolve)
    if issuer_keys:
        if ctx.rom_signer_key is not None and ctx.rom_signer_key in issuer_keys and "the ROM signer" not in hits:
            hits.append("the ROM signer (same key)")
        if issuer_keys & _party_keys(base(ctx.cartridge_controller), resolve) \
                and "the cartridge controller" not in hits:
            hits.append("the cartridge controller (same key)")
    if hits:
        return bad("self_issuance", reasons.SELF_ISSUED, f"self-issued: the issuer {issuer} is {' and '.join(hits)}")
    unknown = [what for what in ("the cartridge controller", "the ROM signer") if parties[what] is None]
    note = f" ({' and '.join(unknown)} not supplied)" if unknown else ""
    return ok("self_issuance", f"issuer {issuer} is independent of the cartridge{note}")


def _number(res: dict[str, Any], key: str) -> float | None:
    value = res.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _check_gates(res: dict[str, Any], trust: Trust | None) -> list[Check]:
    sigma_max = trust.sigma_max if trust else DEFAULT_SIGMA_MAX
    min_games = trust.min_games if trust else DEFAULT_MIN_GAMES
    sigma, games, mu = _number(res, "acx:ratingSigma"), _number(res, "acx:gamesPlayed"), _number(res, "acx:ratingMu")
    out = []
    if sigma is None or not sigma < sigma_max:
        out.append(bad(reasons.SIGMA_GATE, reasons.SIGMA_GATE, f"sigma {sigma} is not below the gate's {sigma_max}"))
    else:
        out.append(ok(reasons.SIGMA_GATE, f"sigma {sigma:.4f} < {sigma_max}"))
    if games is None or games < min_games:
        out.append(bad(reasons.GAMES_GATE, reasons.GAMES_GATE,
                       f"{games} games played, the gate wants at least {min_games}"))
    else:
        out.append(ok(reasons.GAMES_GATE, f"{int(games)} games >= {min_games}"))
    level, tier = res.get("acx:acxLevel"), res.get("acx:careerTier")
    if mu is None or sigma is None or not isinstance(level, int):
        out.append(bad("level_consistent", reasons.LEVEL_INCONSISTENT, "rating or level missing"))
    elif level_for(mu, sigma) != (level, tier):
        want = level_for(mu, sigma)
        out.append(bad("level_consistent", reasons.LEVEL_INCONSISTENT,
                        f"mu={mu} sigma={sigma} gives level {want[0]} ({want[1]}), "
                        f"the credential claims {level} ({tier})"))
    else:
        out.append(ok("level_consistent", f"level {level} ({tier}) = floor(mu - 3 sigma + 0.5)"))
    return out


def _check_bindings(res: dict[str, Any], ctx: VerifyContext) -> list[Check]:
    out = []
    for name, code, key, expected, what in (
        ("rom_binding", reasons.ROM_MISMATCH, "acx:cartridgeRomDigest", ctx.expected_rom_digest, "ROM digest"),
        ("manifest_binding", reasons.MANIFEST_MISMATCH, "acx:cartridgeManifestDigest", ctx.expected_manifest_digest,
         "manifest digest"),
    ):
        actual = res.get(key)
        if expected is None:
            out.append(skip(name, f"no expected {what} given; binding not checked"))
        elif actual == expected:
            out.append(ok(name, f"bound to {what} {expected}"))
        else:
            out.append(bad(name, code, f"{what} binding mismatch: the credential names {actual}, expected {expected}"))
    return out


def _check_solver(res: dict[str, Any], trust: Trust | None) -> Check:
    """Only real runs count unless the consumer opted into simulations; no ``acx:solver`` is a simulation.

    Credentials issued before the ROM solver existed name no solver: they were simulations or unsandboxed
    commands, so they count only where ``reference`` is accepted.
    """
    solver = str(res.get("acx:solver", "reference"))
    accepted = trust.solvers if trust is not None else DEFAULT_SOLVERS
    if solver not in accepted:
        what = "a simulation (reference solver)" if solver == "reference" else f"solver {solver!r}"
        return bad("solver", reasons.SOLVER_NOT_ACCEPTED, f"the level was earned by {what}; this trust file accepts "
                   f"only {', '.join(accepted)} (add 'reference' to solvers: to accept simulated levels)")
    label = "the signed ROM, sandboxed" if solver == "rom" else "a simulation, accepted by this trust file"
    return ok("solver", f"played by {label}")


def _check_model(res: dict[str, Any], trust: Trust | None) -> list[Check]:
    """A level of a ROM that calls a model is a level of that ROM *with that model*: a trust file may name the
    models whose levels count, and may require that held-out prompts went only to a no-training provider."""
    model = res.get("acx:model")
    if model is None:
        return [ok("model", "the agent calls no model")]
    mid = model.get("id") if isinstance(model, dict) else None
    if not isinstance(mid, str):
        return [bad("model", reasons.SCHEMA_INVALID, "acx:model has no id")]
    out = []
    if trust is not None and trust.models is not None and mid not in trust.models:
        out.append(bad("model", reasons.MODEL_NOT_ACCEPTED,
                       f"the level was earned with model {mid}; this trust file accepts {', '.join(trust.models)}"))
    else:
        out.append(ok("model", f"played with model {mid} over {model.get('api')}"))
    use = res.get("acx:modelDataUse", "unknown")
    if trust is not None and trust.require_no_training and use != "no-training":
        out.append(bad("model_data_use", reasons.HELD_OUT_EXPOSED,
                       f"held-out prompts went to a provider whose data terms are {use!r}; this trust file requires "
                       "no-training"))
    return out


def _check_benchmark(res: dict[str, Any], trust: Trust | None) -> list[Check]:
    if trust is None:
        return [skip("benchmark_accepted", "no trust file: benchmark acceptance not checked"),
                skip("held_out_slice", "no trust file: heldOutSliceDigest not checked")]
    bid, ver, dig = res.get("acx:benchmarkId"), res.get("acx:benchmarkVersion"), res.get("acx:benchmarkDigest")
    accepted = trust.benchmark(str(bid), str(ver)) if bid is not None and ver is not None else None
    if accepted is None:
        return [bad("benchmark_accepted", reasons.BENCHMARK_NOT_ACCEPTED,
                     f"benchmark {bid}@{ver} is not accepted by the trust file"),
                skip("held_out_slice", "benchmark not accepted; heldOutSliceDigest not compared")]
    out = []
    if accepted.digest != dig:
        out.append(bad("benchmark_accepted", reasons.BENCHMARK_NOT_ACCEPTED,
                        f"benchmark {bid}@{ver} digest {dig} is not the accepted {accepted.digest}"))
    else:
        out.append(ok("benchmark_accepted", f"benchmark {bid}@{ver} ({dig}) is accepted"))
    held = res.get("acx:heldOutSliceDigest")
    if accepted.held_out_slice_digest is None:
        out.append(skip("held_out_slice", "the trust file pins no heldOutSliceDigest for this benchmark"))
    elif accepted.held_out_slice_digest != held:
        out.append(bad("held_out_slice", reasons.HELD_OUT_MISMATCH,
                        f"heldOutSliceDigest {held} differs from the pinned {accepted.held_out_slice_digest}"))
    else:
        out.append(ok("held_out_slice", f"heldOutSliceDigest matches the pinned {held}"))
    out.append(_check_exam_certification(res, accepted.certified_by) if accepted.certified_by
               else seed_rules.exams(res, trust))
    out += seed_rules.post_cutoff(res, trust, accepted)
    out += seed_rules.tamper_checks(res, trust)
    if accepted.capability is not None:
        out.append(_check_benchmark_capability(res, accepted))
    return out


def _check_exam_certification(res: dict[str, Any], certified_by: tuple[str, ...]) -> Check:
    """A trust file may require the benchmark's exams to be certified by one of named certifiers."""
    if not certified_by:
        return ok("exam_certification", "the trust file requires no exam certification for this benchmark")
    state, certifier = res.get("acx:examCertification"), res.get("acx:examCertifier")
    if state != "certified" or not res.get("acx:examCertificationDigest"):
        return bad("exam_certification", reasons.EXAM_UNCERTIFIED,
                   f"the benchmark's exams were not certified when this level was issued ({state or 'unknown'}); "
                   f"the trust file requires certification by {', '.join(certified_by)}")
    if certifier not in certified_by:
        return bad("exam_certification", reasons.EXAM_UNCERTIFIED,
                   f"the exams were certified by {certifier}, not by {', '.join(certified_by)}")
    return ok("exam_certification", f"exams certified by {certifier} ({res.get('acx:examCertificationDigest')})")


def capability_id_of(text: str) -> str | None:
    """A trust file's capability (an ``acx-cap:`` id or the display form) as an id; None if unreadable."""
    if text.startswith("acx-cap:"):
        return text
    try:
        return parse_capability(text).id
    except AcxError:
        return None


def _check_benchmark_capability(res: dict[str, Any], accepted: AcceptedBenchmark) -> Check:
    """The benchmark must measure the capability the credential is for (when the trust file says which)."""
    claimed = res.get("acx:capabilityId")
    want = capability_id_of(accepted.capability or "")
    if want is None or claimed != want:
        return bad("benchmark_capability", reasons.CAPABILITY_MISMATCH,
                   f"the credential is for capability {claimed}, but benchmark {accepted.id}@{accepted.version} "
                   f"measures {accepted.capability}" + (f" ({want})" if want and want != accepted.capability else ""))
    return ok("benchmark_capability", f"benchmark {accepted.id}@{accepted.version} measures {accepted.capability}")


def _check_validity(credential: LevelCredential, now: datetime) -> list[Check]:
    out = []
    vf, vu = credential.valid_from, credential.valid_until
    start = parse_datetime(vf)
    if start is None:
        out.append(bad("valid_from", reasons.NOT_YET_VALID, f"validFrom {str(vf)[:40]!r} is missing or not a dateTime"))
    elif start > now:
        out.append(bad("valid_from", reasons.NOT_YET_VALID, f"not valid before {vf}"))
    else:
        out.append(ok("valid_from", f"valid from {vf}"))
    if vu is None:
        out.append(ok("valid_until", "no validUntil"))
    else:
        end = parse_datetime(vu)
        if end is None:
            out.append(bad("valid_until", reasons.EXPIRED, f"validUntil {str(vu)[:40]!r} is not a dateTime"))
        elif end <= now:
            out.append(bad("valid_until", reasons.EXPIRED, f"expired at {vu}"))
        else:
            out.append(ok("valid_until", f"valid until {vu}"))
    return out


