"""Evidence: the game records a credential references, checked against its digests and issuer (pure)."""

from __future__ import annotations

from typing import Any

from acx_oci import reasons
from acx_oci.crypto import canonical, envelope_payload, sha256_digest, verify_envelope
from acx_oci.errors import AcxError, UsageError
from acx_oci.evaluation.checks import Check, KeyResolver, VerifyContext, bad, ok, skip
from acx_oci.jsonio import loads_ijson
from acx_oci.model import LevelCredential, evidence_digest


def check_evidence(credential: LevelCredential, res: dict[str, Any], issuer: str | None, ctx: VerifyContext,
                    resolve: KeyResolver, *, signatures_known: bool = False) -> list[Check]:
    """Checks that the cited game-record evidence was supplied, hashes as cited and is signed by the issuer.

    ``signatures_known``: these exact records (bound by the credential's digests) were verified before with the
    issuer's current keys, so only their digests and statements are checked.
    """
    items = credential.get("evidence")
    if not isinstance(items, list) or not items:
        return [bad("evidence_digest", reasons.EVIDENCE_MISMATCH, "the credential references no game-record evidence"),
                skip(reasons.EVIDENCE_SIGNATURE, "no evidence to check")]
    supplied: dict[str, bytes] = {}
    mismatched: list[str] = []
    for name, blob in (ctx.evidence or {}).items():
        actual = sha256_digest(blob)
        supplied[actual] = blob
        if name.startswith("sha256:") and name != actual:
            mismatched.append(f"supplied evidence {name} hashes to {actual}")
    envelopes: list[tuple[str, Any]] = []
    absent: list[str] = []
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
                envelopes.append((digest, loads_ijson(supplied[digest])))
            except ValueError:
                mismatched.append(f"evidence {digest} is not a JSON envelope")
        elif ctx.evidence is not None:  # (the records were supplied, this one was not: missing, not mismatched)
            absent.append(f"evidence[{i}] {digest} is not among the supplied evidence")
        else:
            unavailable += 1
    named = {evidence_digest(item) for item in items}
    if absent and any(d not in named for d in supplied):  # a record supplied in its place: a changed digest
        mismatched, absent = [*mismatched, *absent], []
    out: list[Check] = []
    if mismatched:
        out.append(bad("evidence_digest", reasons.EVIDENCE_MISMATCH, "; ".join([*mismatched, *absent][:5])))
    elif absent:
        out.append(bad("evidence_digest", reasons.EVIDENCE_MISSING, "; ".join(absent[:5])))
    elif not envelopes:
        out.append(skip("evidence_digest", f"{unavailable} evidence item(s) referenced, none available to check"))
    else:
        note = f"; {unavailable} not available" if unavailable else ""
        out.append(ok("evidence_digest", f"{len(envelopes)} evidence item(s) match their digests{note}"))
    if not envelopes:
        out.append(skip(reasons.EVIDENCE_SIGNATURE, "no evidence available to check signatures"))
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
            _, payload = envelope_payload(env) if signatures_known else verify_envelope(env, keys)[:2]
        except AcxError as exc:
            bad_sig.append(f"{digest}: {exc}")
            continue
        bad_bind += _statement_binding(digest, payload, res)
    if bad_sig:
        out.append(bad(reasons.EVIDENCE_SIGNATURE, reasons.EVIDENCE_SIGNATURE, "; ".join(bad_sig[:5])))
    else:
        out.append(ok(reasons.EVIDENCE_SIGNATURE, f"{len(envelopes)} game record(s) signed by the issuer"))
    if bad_bind and out[0].ok:
        out[0] = bad("evidence_digest", reasons.EVIDENCE_MISMATCH, "; ".join(bad_bind[:5]))
    return out


def _statement_binding(digest: str, payload: bytes, res: dict[str, Any]) -> list[str]:
    """A game record must be about the same ROM and benchmark the credential names."""
    try:
        statement = loads_ijson(payload)
    except ValueError:
        return [f"{digest}: payload is not JSON"]
    predicate = statement.get("predicate") if isinstance(statement, dict) else None
    if not isinstance(predicate, dict):
        return []
    out = []
    for key, field_ in (("romDigest", "acx:cartridgeRomDigest"), ("benchmarkDigest", "acx:benchmarkDigest")):
        if key in predicate and predicate[key] != res.get(field_):
            out.append(f"{digest}: game record {key} {predicate[key]} is not the credential's {res.get(field_)}")
    raw_solver = predicate.get("solver")
    solver: dict[str, Any] = raw_solver if isinstance(raw_solver, dict) else {}
    claimed = res.get("acx:solver", "reference")
    if claimed != "reference":
        # A real run counts only where every record shows that solver and the sandbox proven on that run.
        if solver.get("name") != claimed:
            out.append(f"{digest}: game record solver {solver.get('name')!r} is not the credential's {claimed!r}")
        containment = predicate.get("containment")
        if not isinstance(containment, dict) or containment.get("proven") is not True:
            out.append(f"{digest}: game record has no proven containment")
        if predicate.get("runtimeDigest") != res.get("acx:runtimeDigest"):
            out.append(f"{digest}: game record runtimeDigest is not the credential's")
    return out
