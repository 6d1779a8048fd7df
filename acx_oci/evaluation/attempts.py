"""Bounding a cartridge's attempt history (issue 23 item 4): ``maxAttempts: {count, window}``.

Pure: it reads the attempt history resolve already verified (attempt records signed by a trusted verifier
for this cartridge, and the ``acx:attempt`` counters of verified credentials). Resubmitting until lucky is
visible here: a verifier's counter keeps counting the attempts whose records the publisher deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from acx_oci.model import AttemptHistory

SCOPE_CARTRIDGE, SCOPE_PUBLISHER = "cartridge", "publisher"  # maxAttempts.scope


@dataclass(frozen=True)
class MaxAttempts:
    """At most ``count`` attempts in the last ``window_seconds`` (``window`` as written)."""

    count: int
    window_seconds: float
    window: str
    scope: str = SCOPE_CARTRIDGE  # publisher: every cartridge id of the ROM's signing key, as its verifiers count

    @property
    def by(self) -> str:
        """`` by this publisher`` for the publisher scope, else empty: how counts of this bound read."""
        return " by this publisher" if self.scope == SCOPE_PUBLISHER else ""

    def describe(self) -> str:
        """How the bound reads in a requirement's description."""
        return f"at most {self.count} attempt(s){self.by} in {self.window}"


def attempts_in_window(history: AttemptHistory, now: datetime, window_seconds: float,
                       scope: str = SCOPE_CARTRIDGE) -> int:
    """How many attempts fall in the window: per (verifier, benchmark), the larger of the entries seen
    in it and the verifier's own counter when its first attempt is in it (records can be deleted, the counter
    in a signed credential or record cannot). Scope ``publisher`` takes the verifier's publisher-wide counter too:
    the records of the publisher's other cartridge ids are not fetched, the verifier signed how many there were."""
    since = now - timedelta(seconds=window_seconds)
    total = 0
    for group in history.groups().values():
        seen = sum(1 for e in group if e.instant is not None and e.instant >= since)
        counted = max((e.sequence or 0 for e in group
                       if e.first_attempt is not None and e.first_attempt >= since), default=0)
        if scope == SCOPE_PUBLISHER:  # the verifier's signed count across the publisher key's cartridge ids
            counted = max([counted, *(e.publisher_sequence or 0 for e in group if e.publisher_first_attempt
                                      is not None and e.publisher_first_attempt >= since)])
        total += max(seen, counted)
    return total
