"""Revocation: is the status list sound, and is the credential's bit set? (pure)

Only the credential's own issuer may sign its status list; a list that is
expired or older than the trust file's ``status.maxAge`` is *stale*
(``status_stale``); a list whose ``acx:sequence`` is lower than the highest
the consumer has seen (``min_sequence``, passed in: remembering it is the
caller's I/O) is a rollback (``status_rollback``); any other defect is
``status_invalid``; without a usable list the revocation status is unknown and
fails closed unless allowed.
"""

from __future__ import annotations

from typing import Any

from acx_oci import reasons
from acx_oci.errors import UsageError
from acx_oci.evaluation.checks import Check, KeyResolver, VerifyContext, bad, check_proofs, ok, skip
from acx_oci.model import LevelCredential, issuer_id, statuslist
from acx_oci.timeutil import parse_datetime

STALE = reasons.STATUS_STALE
INVALID = reasons.STATUS_INVALID
ROLLBACK = reasons.STATUS_ROLLBACK


def check_status_list(status_list: Any, list_url: str | None, issuer: str | None, ctx: VerifyContext,
                      resolve: KeyResolver, purpose: str | None = None,
                      min_sequence: int = 0) -> list[tuple[str, str]]:
    """Problems with the status list itself as (reason code, sentence): proof, issuer, id, purpose, age, sequence.

    Expiry and age are ``status_stale`` (refresh and retry); a sequence below ``min_sequence`` is
    ``status_rollback``; anything else is ``status_invalid``.
    """
    problems: list[tuple[str, str]] = []
    if not isinstance(status_list, dict):
        return [(INVALID, "the status list is not a JSON object")]
    try:
        purposes = statuslist.list_purposes(status_list)
        statuslist.list_bits(status_list, ctx.max_status_bytes)
        sequence = statuslist.list_sequence(status_list)
    except UsageError as exc:
        return [(INVALID, str(exc))]
    if sequence < min_sequence:
        problems.append((ROLLBACK, f"the status list's {statuslist.SEQUENCE} is {sequence}, lower than "
                                   f"{min_sequence}, the highest already seen for it: an older copy was put back"))
    if list_url is not None and status_list.get("id") != list_url:
        problems.append((INVALID, f"the list's id {str(status_list.get('id'))[:80]} is not {list_url}"))
    if purpose is not None and purpose not in purposes:
        problems.append((INVALID, f"the list's statusPurpose {purposes} does not include {purpose}"))
    list_issuer = issuer_id(status_list)
    # Only the credential's own issuer may speak for its status: any other verifier, trusted or
    # not, could otherwise publish the list's URL with every bit clear and undo a revocation.
    if list_issuer is None or list_issuer != issuer:
        problems.append((INVALID, f"the list's issuer {list_issuer} is not the credential's issuer {issuer}"))
    proof_checks = check_proofs(status_list, resolve, ctx.now, name="status_list_proof", issuer=list_issuer)
    problems += [(INVALID, f"status list proof: {c.message}") for c in proof_checks if not c.ok]
    start = parse_datetime(status_list.get("validFrom"))
    if status_list.get("validUntil") is not None:
        end = parse_datetime(status_list.get("validUntil"))
        if end is None or end <= ctx.now:
            problems.append((STALE, f"the status list expired at {status_list.get('validUntil')}"))
    if start is not None and start > ctx.now:
        problems.append((INVALID, f"the status list is not valid before {status_list.get('validFrom')}"))
    max_age = ctx.trust.status_max_age if ctx.trust else None
    if max_age is not None:
        if start is None:
            problems.append((STALE, "the status list has no validFrom, so its age is unknown"))
        elif (ctx.now - start).total_seconds() > max_age:
            problems.append((STALE, f"the status list (validFrom {status_list.get('validFrom')}) is older than the "
                            f"maximum age of {int(max_age)} s"))
    return problems


def check_status(credential: LevelCredential, issuer: str | None, ctx: VerifyContext,
                  resolve: KeyResolver) -> list[Check]:
    """Checks the status list entry and revocation; fails closed unless unknown status is allowed."""
    entries = credential.status_entries
    if not entries:
        return [bad("status_list", reasons.STATUS_INVALID, "the credential has no BitstringStatusListEntry"),
                bad("revocation", reasons.STATUS_UNKNOWN, "revocation status cannot be known")]
    may_skip = ctx.allow_unknown_status or ctx.trust is None or not ctx.trust.fail_closed
    if ctx.status_list is None:
        if may_skip:
            return [skip("status_list", "no status list available; allowed to continue without it"),
                    skip("revocation", "revocation status unknown (allowed by --allow-unknown-status or policy)")]
        return [bad("status_list", reasons.STATUS_UNKNOWN, "no status list available for "
                     f"{entries[0].get('statusListCredential')} (fail closed)"),
                bad("revocation", reasons.STATUS_UNKNOWN, "revocation status unknown: failing closed")]
    listed = [e for e in entries if e.get("statusListCredential") == ctx.status_list.get("id")]
    entry = listed[0] if listed else entries[0]
    url = entry.get("statusListCredential")
    purpose = entry.get("statusPurpose")
    list_url = url if isinstance(url, str) else None
    want_purpose = purpose if isinstance(purpose, str) else None
    memo_key = (id(ctx.status_list), list_url, issuer, want_purpose, ctx.status_min_sequence)
    if ctx.status_cache is not None and memo_key in ctx.status_cache:
        problems, cached_bits = ctx.status_cache[memo_key]
    else:
        problems = check_status_list(ctx.status_list, list_url, issuer, ctx, resolve, want_purpose,
                                     ctx.status_min_sequence)
        cached_bits = None
        if not problems:
            try:
                cached_bits = statuslist.list_bits(ctx.status_list, ctx.max_status_bytes)
            except UsageError:
                cached_bits = None
        if ctx.status_cache is not None:
            ctx.status_cache[memo_key] = (problems, cached_bits)
    if problems:
        codes = {c for c, _ in problems}
        # an unsound list's sequence means nothing, so status_invalid outranks status_rollback
        code = INVALID if INVALID in codes else ROLLBACK if ROLLBACK in codes else STALE
        return [bad("status_list", code, "; ".join(m for _, m in problems)),
                bad("revocation", reasons.STATUS_UNKNOWN, "revocation status unknown: the status list is not usable")]
    out = [ok("status_list", f"status list {url} is signed by {issuer_id(ctx.status_list)} and current")]
    try:
        index = statuslist.parse_index(entry.get("statusListIndex"))
        bits = cached_bits if cached_bits is not None else statuslist.list_bits(ctx.status_list,
                                                                                 ctx.max_status_bytes)
        is_set = statuslist.get_bit(bits, index)
    except UsageError as exc:
        return [out[0], bad("revocation", reasons.STATUS_INVALID, str(exc))]
    if is_set:
        code = reasons.SUSPENDED if purpose == "suspension" else reasons.REVOKED
        out.append(bad("revocation", code, f"{code}: bit {index} of {url} is set ({purpose})"))
    else:
        out.append(ok("revocation", f"not {purpose or reasons.REVOKED}: bit {index} of {url} is clear"))
    return out
