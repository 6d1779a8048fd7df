"""A quorum of verifiers (issue 23 item 5): a level several independent verifiers vouch for.

Pure: it reads credentials that already passed every check. Independence is by name *and* by key, as
self-issuance is: a did:key and a did:web that sign with the same key are one verifier, so a publisher who
runs one verifier under two names gets one vote. The quorum's level is the lowest of the N it chose, and it
chooses the N highest distinct verifiers (greedily, so no pick can lower the N-th level).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from acx_oci.model import AcceptedCredential
from acx_oci.urls import without_fragment


@dataclass(frozen=True)
class Quorum:
    """The verifiers counted (one credential each, highest level first) and the level they agree on."""

    wanted: int
    members: tuple[AcceptedCredential, ...]

    @property
    def met(self) -> bool:
        """Whether N distinct verifiers vouch."""
        return len(self.members) >= self.wanted

    @property
    def level(self) -> int | None:
        """The lowest level of the N chosen (None when the quorum is not met)."""
        return min(a.acx_level for a in self.members[: self.wanted]) if self.met else None

    def describe(self) -> str:
        """One line: who counted, and the quorum's level."""
        who = ", ".join(f"{without_fragment(a.issuer)} (level {a.acx_level})" for a in self.members)
        if not self.met:
            return (f"{len(self.members)} distinct verifier(s) of the {self.wanted} required"
                    + (f": {who}" if who else "") + " (one key under two DIDs counts once)")
        return f"quorum of {self.wanted}: {who}; level {self.level} (the lowest of the {self.wanted})"


def _identity(acc: AcceptedCredential) -> frozenset[bytes]:
    """What makes a verifier itself: its proof keys (the DID itself when no key is known)."""
    return acc.proof_keys or frozenset({without_fragment(acc.issuer).encode()})


def quorum(credentials: Iterable[AcceptedCredential], wanted: int) -> Quorum:
    """Pick up to ``wanted`` credentials from distinct verifiers (distinct DIDs and disjoint keys), highest first."""
    chosen: list[AcceptedCredential] = []
    dids: set[str] = set()
    keys: set[bytes] = set()
    for acc in sorted(credentials, key=lambda a: (a.acx_level, a.valid_from, a.credential_digest), reverse=True):
        did = without_fragment(acc.issuer)
        ident = _identity(acc)
        if did in dids or ident & keys:
            continue
        chosen.append(acc)
        dids.add(did)
        keys |= ident
        if len(chosen) >= wanted:
            break
    return Quorum(wanted, tuple(chosen))
