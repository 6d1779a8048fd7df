"""May a signed status list replace the one at its place? One rule for ``copy`` and the gateway (pure).

A place (a mirror's tag, the upstream's tag behind the gateway) holds one list per URL. Whoever can push
there may offer any list, so a replacing list must verify as its own issuer's (Data Integrity proof by a
key of the issuer it names, as ``resolve`` checks it), be the same issuer's as the list it replaces, and be
*newer*: its ``acx:sequence`` above the one there (an equal one is no newer: the issuer raises it on every
re-sign, so an equal sequence is the same list or an equivocation, and neither replaces) and not below the
highest this consumer has seen. A list there that provably is not its issuer's (its proof fails against the
issuer's known keys) counts for nothing: a forged list planted first must not outrank the issuer's. Keys
come from the trust file or the DID itself (did:key); nothing here goes online.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from acx_oci import reasons
from acx_oci.errors import AcxError
from acx_oci.evaluation.checks import VerifyContext, check_proofs, resolver
from acx_oci.model import LevelCredential, issuer_id, statuslist
from acx_oci.trust import Trust


def proof_problem(doc: dict[str, Any], trust: Trust | None, now: datetime, timed: bool = True) -> str | None:
    """Why ``doc``'s proof does not verify as its own issuer's, or None when it does (``timed``: an expired proof
    fails too)."""
    issuer = issuer_id(doc)
    if issuer is None:
        return "it names no issuer"
    ctx = VerifyContext(trust=trust, now=now)
    try:
        checks = check_proofs(doc, resolver(ctx), now if timed else None, name="status_list_proof", issuer=issuer)
        failed = [c.message for c in checks if not c.ok]
    except AcxError as exc:  # (the proof check reports key problems itself; anything else is unverifiable too)
        failed = [str(exc)]
    return "; ".join(failed)[:300] if failed else None


def keys_known(did_value: str, trust: Trust | None) -> bool:
    """Whether the DID's keys resolve here (trust file documents, did:key), without the network."""
    try:
        resolver(VerifyContext(trust=trust, now=datetime.min))(did_value)
    except AcxError:
        return False
    return True


def forged(doc: dict[str, Any], trust: Trust | None, now: datetime) -> bool:
    """True when ``doc`` provably is not its issuer's: no issuer, or its issuer's keys are known and its proof fails.

    A list whose issuer's keys are unknown here is not judged (False): it is kept, as an unverifiable list.
    """
    issuer = issuer_id(doc)
    if issuer is None:
        return True
    return keys_known(issuer, trust) and proof_problem(doc, trust, now, timed=False) is not None


def sequence_of(doc: dict[str, Any]) -> int | None:
    """The list's ``acx:sequence`` (None: malformed)."""
    try:
        return statuslist.list_sequence(doc)
    except AcxError:
        return None


@dataclass(frozen=True)
class Replacement:
    """The verdict on one offered list: ``code`` empty when it may replace the one there, else why not."""

    code: str = ""
    reason: str = ""  # a clause: "it is signed by X, the one there by Y"
    offered: int | None = None  # the offered list's sequence
    there: int | None = None  # the sequence of the list there, when that one counts

    @property
    def ok(self) -> bool:
        """The offered list may replace the one there."""
        return not self.code


def list_owners(credentials: list[LevelCredential], names_place: Callable[[str], bool], trust: Trust | None,
                now: datetime) -> frozenset[str]:
    """The issuers a status list's place belongs to: those whose credentials name a list there (``names_place``
    of a ``statusListCredential`` URL: its tag is the place's) and verify as theirs (Data Integrity, as
    :func:`proof_problem` checks); where any of them is a verifier the trust file names, only those (an untrusted
    key cannot contest a trusted verifier's place). Empty: nobody is known, or a naming credential's issuer
    cannot be checked here and no trusted verifier names the place (a did:web without its document: then a
    self-issued stranger would have been the only owner)."""
    named: set[str] = set()
    unknown = False  # a credential naming the place whose issuer's keys are not known here: cannot be told apart
    for cred in credentials:
        issuer = cred.issuer
        urls = [e.get("statusListCredential") for e in cred.status_entries]
        if issuer is None or not any(isinstance(u, str) and names_place(u) for u in urls):
            continue
        if not keys_known(issuer, trust):
            unknown = True
        elif proof_problem(cred.to_json(), trust, now, timed=False) is None:
            named.add(issuer)
    trusted = {i for i in named if trust is not None and trust.is_trusted_verifier(i)}
    if trusted:
        return frozenset(trusted)
    # nobody the trust file names: a checkable stranger must not exclude an issuer whose keys are unknown here
    return frozenset() if unknown else frozenset(named)


def may_replace(offered: dict[str, Any], there: dict[str, Any] | None, trust: Trust | None, now: datetime, *,
                highest_seen: int = 0, there_name: str = "the one there",
                owners: frozenset[str] = frozenset()) -> Replacement:
    """Whether ``offered`` may replace ``there`` (None: nothing there) at its place (see the module docstring).

    ``status_rollback``: not newer than the list there, or than the highest seen; ``status_invalid``: not its
    issuer's, or not the issuer's of the list there (or that one's issuer cannot be checked here), or, with
    ``owners`` (:func:`list_owners`: whose credentials name the place), not theirs. A list there of an issuer
    outside ``owners`` was planted: it counts for nothing, so the owners' list replaces it.
    """
    mine = sequence_of(offered)
    if owners and issuer_id(offered) not in owners:
        return Replacement(reasons.STATUS_INVALID, f"it is signed by {issuer_id(offered)}, but the credentials "
                                                   f"that name it were issued by {', '.join(sorted(owners))}: a "
                                                   "status list's place belongs to its credentials' issuer",
                           mine, None)
    if there is not None and owners and issuer_id(there) not in owners:
        there = None  # planted at the owners' place by someone else
    counts = there is not None and not forged(there, trust, now)
    theirs = sequence_of(there) if there is not None and counts else None
    if mine is None:
        return Replacement(reasons.STATUS_INVALID, f"its {statuslist.SEQUENCE} is malformed", None, theirs)
    if theirs is not None and theirs >= mine:
        return Replacement(reasons.STATUS_ROLLBACK, f"it is not newer than {there_name} ({statuslist.SEQUENCE} "
                                                    f"{mine}, {there_name} {theirs})", mine, theirs)
    problem = proof_problem(offered, trust, now)
    if problem is not None:
        return Replacement(reasons.STATUS_INVALID, f"it does not verify as its issuer {issuer_id(offered)}'s: "
                                                   f"{problem}", mine, theirs)
    other = issuer_id(there) if there is not None and counts else None
    if other is not None and other != issuer_id(offered):
        if keys_known(other, trust):
            return Replacement(reasons.STATUS_INVALID, f"it is signed by {issuer_id(offered)}, {there_name} by "
                                                       f"{other}", mine, theirs)
        return Replacement(reasons.STATUS_INVALID, f"it is signed by {issuer_id(offered)} and {there_name}, by "
                                                   f"{other}, cannot be checked here", mine, theirs)
    if mine < highest_seen:
        return Replacement(reasons.STATUS_ROLLBACK, f"it is older than the newest this consumer has seen "
                                                    f"({statuslist.SEQUENCE} {mine} < {highest_seen})", mine, theirs)
    return Replacement(offered=mine, there=theirs)
