"""May a copy's source status list replace the one already in the destination?

A copy replaces the destination's list when the source's ``acx:sequence`` is
not lower. The sequence is inside the signed credential, but a source registry
is not trusted: anyone who can push there can write a list with a huge
sequence. Replaced unchecked, that forged list would push a mirror's good one
out (resolving the mirror then fails closed: a denial of service on every
credential the list covers). So a replacing list must verify (Data Integrity
proof by a key of the issuer named in the credential, as ``resolve`` checks
it) and be the same issuer's as the list it replaces; only a destination list
whose proof fails against its issuer's keys (forged itself) may be replaced by
another issuer's verified list. Keys come from the trust file (pinned DID documents) or, for
``did:key``, the DID itself; there is no network here, so a ``did:web`` issuer
needs ``--trust``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from acx_oci.errors import AcxError, StatusReplaceRefused
from acx_oci.evaluation.checks import VerifyContext, check_proofs, resolver
from acx_oci.model import statuslist
from acx_oci.model.credential import issuer_id
from acx_oci.trust.trustfile import Trust


def _proof_problem(doc: dict[str, Any], ctx: VerifyContext, timed: bool = True) -> str | None:
    """Why ``doc``'s proof does not verify as its own issuer's, or None when it does (``timed``: an expired proof
    fails too)."""
    issuer = issuer_id(doc)
    if issuer is None:
        return "it names no issuer"
    try:
        checks = check_proofs(doc, resolver(ctx), ctx.now if timed else None, name="status_list_proof", issuer=issuer)
        failed = [c.message for c in checks if not c.ok]
    except AcxError as exc:  # (the proof check reports key problems itself; anything else is unverifiable too)
        failed = [str(exc)]
    return "; ".join(failed)[:300] if failed else None


def _sequence(doc: dict[str, Any]) -> str:
    try:
        return str(statuslist.list_sequence(doc))
    except AcxError:
        return "none"


def forged(doc: dict[str, Any], trust: Trust | None, now: datetime) -> bool:
    """True when ``doc`` provably is not its issuer's: no issuer, or its issuer's keys are known and its proof fails.

    Such a destination list must not outrank a verified list by its (forged) sequence: a first copy from a hostile
    source plants its list unchecked in an empty mirror, and the rollback guard would then keep it for good.
    A list whose issuer's keys are unknown here is not judged (False): it is kept, as an unverifiable newer list.
    """
    ctx = VerifyContext(trust=trust, now=now)
    issuer = issuer_id(doc)
    if issuer is None:
        return True
    try:
        resolver(ctx)(issuer)
    except AcxError:
        return False
    return _proof_problem(doc, ctx, timed=False) is not None  # (a genuine list whose proof expired is no forgery)


def check_replacement(tag: str, url: str, source: dict[str, Any], destination: dict[str, Any] | None,
                      trust: Trust | None, now: datetime) -> None:
    """Raise :class:`StatusReplaceRefused` unless ``source`` may replace ``destination`` (module docstring)."""
    ctx = VerifyContext(trust=trust, now=now)
    head = (f"copy: {tag}: the source's status list ({statuslist.SEQUENCE} {_sequence(source)}) would replace "
            "the destination's, but")
    tail = "; the destination's list is kept and nothing was copied"
    if source.get("id") != url:
        raise StatusReplaceRefused(f"{head} its id {str(source.get('id'))[:80]} is not {url}{tail}")
    problem = _proof_problem(source, ctx)
    if problem is not None:
        hint = "" if trust is not None else " (give --trust FILE with the issuer's DID document)"
        raise StatusReplaceRefused(f"{head} it does not verify as its issuer {issuer_id(source)}'s: "
                                   f"{problem}{hint}{tail}")
    theirs = issuer_id(destination) if destination is not None else None
    if destination is None or theirs is None or theirs == issuer_id(source):
        return
    if _proof_problem(destination, ctx, timed=False) is None:  # an expired genuine list is still its issuer's
        raise StatusReplaceRefused(f"{head} it is signed by {issuer_id(source)}, the destination's by {theirs}{tail}")
    try:  # the destination's list does not verify: forged (may be replaced), or its issuer's keys are unknown here
        resolver(ctx)(theirs)
    except AcxError:
        raise StatusReplaceRefused(f"{head} it is signed by {issuer_id(source)} and the destination's, by {theirs}, "
                                   f"cannot be checked here (give --trust FILE with its DID document){tail}") from None
