"""Which copy of a status list a credential is judged by, and what a credential says of its list (pure).

Split from :mod:`acx_oci.evaluation.judge` so the judge's walk reads on its own.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from acx_oci.errors import AcxError
from acx_oci.model import LevelCredential, issuer_id, statuslist
from acx_oci.timeutil import parse_datetime

FLOOR = datetime.min.replace(tzinfo=UTC)


def status_url(credential: LevelCredential) -> str | None:
    """The first status entry's list URL (the one a resolver fetches)."""
    return credential.view.status_url


def sequence(status_list: dict[str, Any]) -> int:
    """A list's ``acx:sequence`` for ordering copies; -1 when malformed (it loses, and fails its check)."""
    try:
        return statuslist.list_sequence(status_list)
    except AcxError:
        return -1


def _bit_is_set(doc: dict[str, Any], index: int | None, bits_memo: dict[int, bytes | None]) -> bool:
    if id(doc) not in bits_memo:
        try:
            bits_memo[id(doc)] = statuslist.list_bits(doc)
        except AcxError:
            bits_memo[id(doc)] = None
    bits = bits_memo[id(doc)]
    return bits is not None and index is not None and 0 <= index < len(bits) * 8 and statuslist.get_bit(bits, index)


def choose_status_list(credential: LevelCredential, found: tuple[dict[str, Any], ...],
                       bits_memo: dict[int, bytes | None] | None = None) -> dict[str, Any] | None:
    """The list to judge ``credential`` by: one with its bit set if any source has one, else the newest.

    A revocation never clears a bit, so a list that shows the bit set wins
    (its proof and issuer are still checked): a repository owner who puts
    back an older, pre-revocation copy of the verifier's list loses to any
    fresher copy the user supplies or fetches. Otherwise (and among those
    with the bit set) the highest ``acx:sequence`` wins, then the latest
    ``validFrom``; against an owner and no other source, the remembered
    sequence and the list's one-day validity are the defence.

    Only the credential's own issuer may speak for its status, so copies naming another issuer (a list
    planted at the URL by whoever could push there) are set aside while one naming the issuer is at hand:
    they would only make the credential ``status_invalid`` (or, with the bit set, out-rank its issuer's
    list). With none but those, the newest is still judged, and fails as not the issuer's.
    """
    memo: dict[int, bytes | None] = {} if bits_memo is None else bits_memo
    view = credential.view
    index = view.status_index
    own = [c for c in found if view.issuer is not None and issuer_id(c) == view.issuer]
    found = tuple(own) or found
    revoking = [c for c in found if _bit_is_set(c, index, memo)]
    return max(revoking or found, key=lambda c: (sequence(c), parse_datetime(c.get("validFrom")) or FLOOR),
               default=None)
