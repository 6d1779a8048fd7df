"""Level-credential verification: every check runs, every failure is reported.

A verifier that stops at the first failure tells a forger which lock to pick
next and tells an operator only half the story, so each rule is its own
:class:`Check` with a stable reason ``code`` and one sentence. Everything is
passed in — trust, ``now``, the status-list document, evidence bytes — so the
same inputs always give the same verdict, offline. (The only exception is DID
resolution over HTTPS, and only when ``allow_network`` is set; inject
``resolve_keys`` to keep even that out.)

Reason codes (stable): ``schema_invalid``, ``proof_missing``, ``proof_invalid``,
``did_unresolvable``, ``method_not_authorized``, ``issuer_key_mismatch``,
``issuer_untrusted``, ``self_issued``, ``sigma_gate``, ``games_gate``,
``level_inconsistent``, ``rom_mismatch``, ``manifest_mismatch``,
``benchmark_not_accepted``, ``held_out_mismatch``, ``not_yet_valid``,
``expired``, ``status_unknown``, ``status_invalid``, ``status_stale``,
``revoked``, ``suspended``, ``evidence_mismatch``, ``evidence_signature``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from acx_oci.crypto import dataintegrity
from acx_oci.crypto.digest import sha256_digest
from acx_oci.crypto.dsse import verify_envelope
from acx_oci.crypto.jcs import canonical
from acx_oci.errors import AcxError, UsageError
from acx_oci.jsonio import first_error
from acx_oci.model import statuslist
from acx_oci.model.credential import evidence_digest, issuer_id, level_for, level_result, status_entries
from acx_oci.net import https
from acx_oci.timeutil import parse_datetime
from acx_oci.trust import did
from acx_oci.trust.trustfile import DEFAULT_MIN_GAMES, DEFAULT_SIGMA_MAX, Trust

KeyResolver = Callable[[str], list[tuple[str, bytes]]]
StatusCache = dict[tuple[int, str | None, str | None, str | None], tuple[list[str], bytes | None]]


@dataclass(frozen=True)
class Check:
    """One rule's verdict. ``skipped`` checks pass but say why they could not run."""

    name: str
    ok: bool
    code: str
    message: str
    skipped: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "code": self.code, "message": self.message,
                "skipped": self.skipped}


@dataclass(frozen=True)
class VerifyContext:
    trust: Trust | None
    now: datetime
    expected_rom_digest: str | None = None
    expected_manifest_digest: str | None = None
    cartridge_controller: str | None = None
    rom_signer: str | None = None
    rom_signer_key: bytes | None = None  # the key the ROM signature verified with (independence by key)
    status_list: dict[str, Any] | None = None
    allow_unknown_status: bool = False
    evidence: dict[str, bytes] | None = None
    allow_network: bool = False
    did_web_base_url: str | None = None
    max_status_bytes: int = statuslist.DEFAULT_MAX_BYTES
    resolve_keys: KeyResolver | None = None
    # Memo for status-list verdicts, shared by the caller across many credentials that
    # point at the same list object (resolve checks 1,000 credentials against one list).
    status_cache: StatusCache | None = None


@dataclass(frozen=True)
class VerifyResult:
    checks: list[Check] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    @property
    def codes(self) -> list[str]:
        return [c.code for c in self.checks if not c.ok]

    @property
    def skipped(self) -> list[str]:
        return [c.name for c in self.checks if c.skipped]

    def to_json(self) -> dict[str, Any]:
        return {"verified": self.verified, "codes": self.codes, "checks": [c.to_json() for c in self.checks]}


def _ok(name: str, message: str) -> Check:
    return Check(name, True, "ok", message)


def _skip(name: str, message: str) -> Check:
    return Check(name, True, "skipped", message, skipped=True)


def _bad(name: str, code: str, message: str) -> Check:
    return Check(name, False, code, message)


def _base(did_url: Any) -> str | None:
    return did_url.split("#", 1)[0] if isinstance(did_url, str) else None


def _subject_id(credential: dict[str, Any]) -> str | None:
    subject = credential.get("credentialSubject")
    if isinstance(subject, list):
        subject = subject[0] if subject else None
    value = subject.get("id") if isinstance(subject, dict) else None
    return value if isinstance(value, str) else None


def _resolver(ctx: VerifyContext) -> KeyResolver:
    if ctx.resolve_keys is not None:
        return ctx.resolve_keys
    fetch = https.fetcher(max_bytes=did.MAX_DID_DOCUMENT_BYTES, accept="application/did+json, application/json") \
        if ctx.allow_network else None
    return lambda ref: did.assertion_keys(ref, ctx.trust, fetch, ctx.did_web_base_url)


# --------------------------------------------------------------------------- proofs

def check_proofs(document: dict[str, Any], resolve: KeyResolver, now: datetime | None,
                 name: str = "proof", issuer: str | None = None) -> list[Check]:
    """Every proof verifies and (when ``issuer`` is given) is by a method the issuer controls."""
    results = dataintegrity.verify(document, lambda vm: [key for _, key in resolve(vm)], now=now)
    checks: list[Check] = []
    bad = [r for r in results if not r.ok]
    if bad:
        checks.append(_bad(name, bad[0].code, "; ".join(r.message for r in bad)))
    else:
        checks.append(_ok(name, "; ".join(r.message for r in results)))
    if issuer is not None:
        methods = [r.verification_method for r in results]
        foreign = [m for m in methods if _base(m) != issuer]
        if not methods or foreign:
            checks.append(_bad(f"{name}_issuer", "issuer_key_mismatch",
                               f"the proof is by {', '.join(str(m) for m in foreign) or 'nobody'}, "
                               f"not by a key of the issuer {issuer}"))
        else:
            checks.append(_ok(f"{name}_issuer", f"signed by the issuer's own key ({', '.join(map(str, methods))})"))
    return checks


def verify_proof_only(credential: Any, ctx: VerifyContext) -> VerifyResult:
    """Proof alone (no trust file): every level rule is reported as skipped, not passed silently."""
    if not isinstance(credential, dict):
        return VerifyResult([_bad("schema", "schema_invalid", "the credential is not a JSON object")])
    checks = check_proofs(credential, _resolver(ctx), ctx.now)
    for name in ("issuer_trusted", "self_issuance", "gates", "bindings", "benchmark_accepted",
                 "validity", "status", "evidence"):
        checks.append(_skip(name, "not checked without a trust file"))
    return VerifyResult(checks)


# --------------------------------------------------------------------------- the level rules

def verify_level_credential(credential: Any, ctx: VerifyContext) -> VerifyResult:
    """Run every level rule on ``credential`` and report each one."""
    if not isinstance(credential, dict):
        return VerifyResult([_bad("schema", "schema_invalid", "the credential is not a JSON object")])
    resolve = _resolver(ctx)
    checks: list[Check] = [_check_schema(credential)]
    issuer = issuer_id(credential)
    checks += check_proofs(credential, resolve, ctx.now, issuer=issuer)
    checks.append(_check_issuer_trusted(issuer, ctx.trust))
    checks.append(_check_self_issuance(credential, issuer, ctx, resolve))
    res = level_result(credential) or {}
    checks += _check_gates(res, ctx.trust)
    checks += _check_bindings(res, ctx)
    checks += _check_benchmark(res, ctx.trust)
    checks += _check_validity(credential, ctx.now)
    checks += _check_status(credential, issuer, ctx, resolve)
    checks += _check_evidence(credential, res, issuer, ctx, resolve)
    return VerifyResult(checks)


def _check_schema(credential: dict[str, Any]) -> Check:
    error = first_error(credential, "level-credential.schema.json")
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return _bad("schema", "schema_invalid", f"not a level credential: at {where}: {error.message[:200]}")
    return _ok("schema", "VC 2.0 structure and acx level fields present")


def _check_issuer_trusted(issuer: str | None, trust: Trust | None) -> Check:
    if trust is None:
        return _skip("issuer_trusted", "no trust file: the issuer's trustworthiness was not checked")
    if issuer and trust.is_trusted_verifier(issuer):
        return _ok("issuer_trusted", f"issuer {issuer} is a trusted verifier")
    return _bad("issuer_trusted", "issuer_untrusted", f"issuer {issuer} is not a verifier in the trust file")


def _party_keys(did_value: str | None, resolve: KeyResolver) -> set[bytes]:
    """The Ed25519 keys a DID can sign with (empty when it cannot be resolved offline)."""
    if not did_value:
        return set()
    try:
        return {key for _, key in resolve(did_value)}
    except AcxError:
        return set()


def _check_self_issuance(credential: dict[str, Any], issuer: str | None, ctx: VerifyContext,
                         resolve: KeyResolver) -> Check:
    """Independence by name *and* by key: did:web:V and did:key:K are one party when V signs with K."""
    subject = _subject_id(credential)
    parties = {"the credential subject": _base(subject), "the cartridge controller": _base(ctx.cartridge_controller),
               "the ROM signer": _base(ctx.rom_signer)}
    hits = [what for what, value in parties.items() if value is not None and value == issuer]
    if issuer is None:
        return _bad("self_issuance", "self_issued", "the credential names no issuer, so independence cannot hold")
    issuer_keys = _party_keys(issuer, resolve)
    if issuer_keys:
        if ctx.rom_signer_key is not None and ctx.rom_signer_key in issuer_keys and "the ROM signer" not in hits:
            hits.append("the ROM signer (same key)")
        if issuer_keys & _party_keys(_base(ctx.cartridge_controller), resolve) \
                and "the cartridge controller" not in hits:
            hits.append("the cartridge controller (same key)")
    if hits:
        return _bad("self_issuance", "self_issued", f"self-issued: the issuer {issuer} is {' and '.join(hits)}")
    unknown = [what for what in ("the cartridge controller", "the ROM signer") if parties[what] is None]
    note = f" ({' and '.join(unknown)} not supplied)" if unknown else ""
    return _ok("self_issuance", f"issuer {issuer} is independent of the cartridge{note}")


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
        out.append(_bad("sigma_gate", "sigma_gate", f"sigma {sigma} is not below the gate's {sigma_max}"))
    else:
        out.append(_ok("sigma_gate", f"sigma {sigma:.4f} < {sigma_max}"))
    if games is None or games < min_games:
        out.append(_bad("games_gate", "games_gate", f"{games} games played, the gate wants at least {min_games}"))
    else:
        out.append(_ok("games_gate", f"{int(games)} games >= {min_games}"))
    level, tier = res.get("acx:acxLevel"), res.get("acx:careerTier")
    if mu is None or sigma is None or not isinstance(level, int):
        out.append(_bad("level_consistent", "level_inconsistent", "rating or level missing"))
    elif level_for(mu, sigma) != (level, tier):
        want = level_for(mu, sigma)
        out.append(_bad("level_consistent", "level_inconsistent",
                        f"mu={mu} sigma={sigma} gives level {want[0]} ({want[1]}), "
                        f"the credential claims {level} ({tier})"))
    else:
        out.append(_ok("level_consistent", f"level {level} ({tier}) = floor(mu - 3 sigma + 0.5)"))
    return out


def _check_bindings(res: dict[str, Any], ctx: VerifyContext) -> list[Check]:
    out = []
    for name, code, key, expected, what in (
        ("rom_binding", "rom_mismatch", "acx:cartridgeRomDigest", ctx.expected_rom_digest, "ROM digest"),
        ("manifest_binding", "manifest_mismatch", "acx:cartridgeManifestDigest", ctx.expected_manifest_digest,
         "manifest digest"),
    ):
        actual = res.get(key)
        if expected is None:
            out.append(_skip(name, f"no expected {what} given; binding not checked"))
        elif actual == expected:
            out.append(_ok(name, f"bound to {what} {expected}"))
        else:
            out.append(_bad(name, code, f"{what} binding mismatch: the credential names {actual}, expected {expected}"))
    return out


def _check_benchmark(res: dict[str, Any], trust: Trust | None) -> list[Check]:
    if trust is None:
        return [_skip("benchmark_accepted", "no trust file: benchmark acceptance not checked"),
                _skip("held_out_slice", "no trust file: heldOutSliceDigest not checked")]
    bid, ver, dig = res.get("acx:benchmarkId"), res.get("acx:benchmarkVersion"), res.get("acx:benchmarkDigest")
    accepted = trust.benchmark(str(bid), str(ver)) if bid is not None and ver is not None else None
    if accepted is None:
        return [_bad("benchmark_accepted", "benchmark_not_accepted",
                     f"benchmark {bid}@{ver} is not accepted by the trust file"),
                _skip("held_out_slice", "benchmark not accepted; heldOutSliceDigest not compared")]
    out = []
    if accepted.digest != dig:
        out.append(_bad("benchmark_accepted", "benchmark_not_accepted",
                        f"benchmark {bid}@{ver} digest {dig} is not the accepted {accepted.digest}"))
    else:
        out.append(_ok("benchmark_accepted", f"benchmark {bid}@{ver} ({dig}) is accepted"))
    held = res.get("acx:heldOutSliceDigest")
    if accepted.held_out_slice_digest is None:
        out.append(_skip("held_out_slice", "the trust file pins no heldOutSliceDigest for this benchmark"))
    elif accepted.held_out_slice_digest != held:
        out.append(_bad("held_out_slice", "held_out_mismatch",
                        f"heldOutSliceDigest {held} differs from the pinned {accepted.held_out_slice_digest}"))
    else:
        out.append(_ok("held_out_slice", f"heldOutSliceDigest matches the pinned {held}"))
    return out


def _check_validity(credential: dict[str, Any], now: datetime) -> list[Check]:
    out = []
    vf, vu = credential.get("validFrom"), credential.get("validUntil")
    start = parse_datetime(vf)
    if start is None:
        out.append(_bad("valid_from", "not_yet_valid", f"validFrom {str(vf)[:40]!r} is missing or not a dateTime"))
    elif start > now:
        out.append(_bad("valid_from", "not_yet_valid", f"not valid before {vf}"))
    else:
        out.append(_ok("valid_from", f"valid from {vf}"))
    if vu is None:
        out.append(_ok("valid_until", "no validUntil"))
    else:
        end = parse_datetime(vu)
        if end is None:
            out.append(_bad("valid_until", "expired", f"validUntil {str(vu)[:40]!r} is not a dateTime"))
        elif end <= now:
            out.append(_bad("valid_until", "expired", f"expired at {vu}"))
        else:
            out.append(_ok("valid_until", f"valid until {vu}"))
    return out


# --------------------------------------------------------------------------- status

def check_status_list(status_list: Any, list_url: str | None, issuer: str | None, ctx: VerifyContext,
                      resolve: KeyResolver, purpose: str | None = None) -> list[str]:
    """Problems with the status list itself (its proof, issuer, id, purpose, age); empty when sound."""
    problems: list[str] = []
    if not isinstance(status_list, dict):
        return ["the status list is not a JSON object"]
    try:
        purposes = statuslist.list_purposes(status_list)
        statuslist.list_bits(status_list, ctx.max_status_bytes)
    except UsageError as exc:
        return [str(exc)]
    if list_url is not None and status_list.get("id") != list_url:
        problems.append(f"the list's id {str(status_list.get('id'))[:80]} is not {list_url}")
    if purpose is not None and purpose not in purposes:
        problems.append(f"the list's statusPurpose {purposes} does not include {purpose}")
    list_issuer = issuer_id(status_list)
    # Only the credential's own issuer may speak for its status: any other verifier, trusted or
    # not, could otherwise publish the list's URL with every bit clear and undo a revocation.
    if list_issuer is None or list_issuer != issuer:
        problems.append(f"the list's issuer {list_issuer} is not the credential's issuer {issuer}")
    proof_checks = check_proofs(status_list, resolve, ctx.now, name="status_list_proof", issuer=list_issuer)
    problems += [f"status list proof: {c.message}" for c in proof_checks if not c.ok]
    start = parse_datetime(status_list.get("validFrom"))
    if status_list.get("validUntil") is not None:
        end = parse_datetime(status_list.get("validUntil"))
        if end is None or end <= ctx.now:
            problems.append(f"the status list expired at {status_list.get('validUntil')}")
    if start is not None and start > ctx.now:
        problems.append(f"the status list is not valid before {status_list.get('validFrom')}")
    max_age = ctx.trust.status_max_age if ctx.trust else None
    if max_age is not None:
        if start is None:
            problems.append("the status list has no validFrom, so its age is unknown")
        elif (ctx.now - start).total_seconds() > max_age:
            problems.append(f"the status list (validFrom {status_list.get('validFrom')}) is older than the "
                            f"maximum age of {int(max_age)} s")
    return problems


def _check_status(credential: dict[str, Any], issuer: str | None, ctx: VerifyContext,
                  resolve: KeyResolver) -> list[Check]:
    entries = status_entries(credential)
    if not entries:
        return [_bad("status_list", "status_invalid", "the credential has no BitstringStatusListEntry"),
                _bad("revocation", "status_unknown", "revocation status cannot be known")]
    may_skip = ctx.allow_unknown_status or ctx.trust is None or not ctx.trust.fail_closed
    if ctx.status_list is None:
        if may_skip:
            return [_skip("status_list", "no status list available; allowed to continue without it"),
                    _skip("revocation", "revocation status unknown (allowed by --allow-unknown-status or policy)")]
        return [_bad("status_list", "status_unknown", "no status list available for "
                     f"{entries[0].get('statusListCredential')} (fail closed)"),
                _bad("revocation", "status_unknown", "revocation status unknown: failing closed")]
    listed = [e for e in entries if e.get("statusListCredential") == ctx.status_list.get("id")]
    entry = listed[0] if listed else entries[0]
    url = entry.get("statusListCredential")
    purpose = entry.get("statusPurpose")
    list_url = url if isinstance(url, str) else None
    want_purpose = purpose if isinstance(purpose, str) else None
    memo_key = (id(ctx.status_list), list_url, issuer, want_purpose)
    if ctx.status_cache is not None and memo_key in ctx.status_cache:
        problems, cached_bits = ctx.status_cache[memo_key]
    else:
        problems = check_status_list(ctx.status_list, list_url, issuer, ctx, resolve, want_purpose)
        cached_bits = None
        if not problems:
            try:
                cached_bits = statuslist.list_bits(ctx.status_list, ctx.max_status_bytes)
            except UsageError:
                cached_bits = None
        if ctx.status_cache is not None:
            ctx.status_cache[memo_key] = (problems, cached_bits)
    if problems:
        stale = all("older than" in p or "expired" in p or "age is unknown" in p for p in problems)
        code = "status_stale" if stale else "status_invalid"
        return [_bad("status_list", code, "; ".join(problems)),
                _bad("revocation", "status_unknown", "revocation status unknown: the status list is not usable")]
    out = [_ok("status_list", f"status list {url} is signed by {issuer_id(ctx.status_list)} and current")]
    try:
        index = statuslist.parse_index(entry.get("statusListIndex"))
        bits = cached_bits if cached_bits is not None else statuslist.list_bits(ctx.status_list,
                                                                                 ctx.max_status_bytes)
        is_set = statuslist.get_bit(bits, index)
    except UsageError as exc:
        return [out[0], _bad("revocation", "status_invalid", str(exc))]
    if is_set:
        code = "suspended" if purpose == "suspension" else "revoked"
        out.append(_bad("revocation", code, f"{code}: bit {index} of {url} is set ({purpose})"))
    else:
        out.append(_ok("revocation", f"not {purpose or 'revoked'}: bit {index} of {url} is clear"))
    return out


# --------------------------------------------------------------------------- evidence

def _check_evidence(credential: dict[str, Any], res: dict[str, Any], issuer: str | None, ctx: VerifyContext,
                    resolve: KeyResolver) -> list[Check]:
    items = credential.get("evidence")
    if not isinstance(items, list) or not items:
        return [_bad("evidence_digest", "evidence_mismatch", "the credential references no game-record evidence"),
                _skip("evidence_signature", "no evidence to check")]
    supplied: dict[str, bytes] = {}
    mismatched: list[str] = []
    for name, blob in (ctx.evidence or {}).items():
        actual = sha256_digest(blob)
        supplied[actual] = blob
        if name.startswith("sha256:") and name != actual:
            mismatched.append(f"supplied evidence {name} hashes to {actual}")
    envelopes: list[tuple[str, Any]] = []
    unavailable = 0
    for i, item in enumerate(items):
        digest = evidence_digest(item)
        if digest is None:
            mismatched.append(f"evidence[{i}] names no digest")
            continue
        inline = item.get("acx:dsseEnvelope") if isinstance(item, dict) else None
        if inline is not None:
            try:
                actual = sha256_digest(canonical(inline))
            except UsageError:
                actual = "(not canonicalizable)"
            if actual != digest:
                mismatched.append(f"evidence[{i}] inline envelope hashes to {actual}, not {digest}")
                continue
            envelopes.append((digest, inline))
        elif digest in supplied:
            try:
                envelopes.append((digest, json.loads(supplied[digest])))
            except ValueError:
                mismatched.append(f"evidence {digest} is not a JSON envelope")
        elif ctx.evidence is not None:
            mismatched.append(f"evidence[{i}] {digest} is not among the supplied evidence")
        else:
            unavailable += 1
    out: list[Check] = []
    if mismatched:
        out.append(_bad("evidence_digest", "evidence_mismatch", "; ".join(mismatched[:5])))
    elif not envelopes:
        out.append(_skip("evidence_digest", f"{unavailable} evidence item(s) referenced, none available to check"))
    else:
        note = f"; {unavailable} not available" if unavailable else ""
        out.append(_ok("evidence_digest", f"{len(envelopes)} evidence item(s) match their digests{note}"))
    if not envelopes:
        out.append(_skip("evidence_signature", "no evidence available to check signatures"))
        return out
    try:
        keys = [key for _, key in resolve(issuer)] if issuer else []
    except AcxError as exc:
        keys, err = [], str(exc)
    else:
        err = f"issuer {issuer} has no assertion key"
    bad_sig: list[str] = []
    bad_bind: list[str] = []
    for digest, env in envelopes:
        if not keys:
            bad_sig.append(err)
            break
        try:
            _, payload, _ = verify_envelope(env, keys)
        except AcxError as exc:
            bad_sig.append(f"{digest}: {exc}")
            continue
        bad_bind += _statement_binding(digest, payload, res)
    if bad_sig:
        out.append(_bad("evidence_signature", "evidence_signature", "; ".join(bad_sig[:5])))
    else:
        out.append(_ok("evidence_signature", f"{len(envelopes)} game record(s) signed by the issuer"))
    if bad_bind and out[0].ok:
        out[0] = _bad("evidence_digest", "evidence_mismatch", "; ".join(bad_bind[:5]))
    return out


def _statement_binding(digest: str, payload: bytes, res: dict[str, Any]) -> list[str]:
    """A game record must be about the same ROM and benchmark the credential names."""
    try:
        statement = json.loads(payload)
    except ValueError:
        return [f"{digest}: payload is not JSON"]
    predicate = statement.get("predicate") if isinstance(statement, dict) else None
    if not isinstance(predicate, dict):
        return []
    out = []
    for key, field_ in (("romDigest", "acx:cartridgeRomDigest"), ("benchmarkDigest", "acx:benchmarkDigest")):
        if key in predicate and predicate[key] != res.get(field_):
            out.append(f"{digest}: game record {key} {predicate[key]} is not the credential's {res.get(field_)}")
    return out
