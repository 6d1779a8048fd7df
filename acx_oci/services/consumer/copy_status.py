"""May a copy's source status list replace the one already in the destination? The rule is
:func:`acx_oci.evaluation.status_replace.may_replace` (the gateway's too); here it becomes copy's outcome.

The sequence is inside the signed credential, but a source registry is not trusted: anyone who can push
there can write a list with a huge sequence. Replaced unchecked, that forged list would push a mirror's
good one out (resolving the mirror then fails closed: a denial of service on every credential the list
covers). A destination list that is newer (or as new: the same sequence) is kept with a note; any other
refusal is :class:`StatusReplaceRefused`. There is no network here, so a ``did:web`` issuer needs ``--trust``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from acx_oci import reasons
from acx_oci.errors import StatusReplaceRefused
from acx_oci.evaluation import may_replace, sequence_of
from acx_oci.model import statuslist
from acx_oci.trust import Trust


def check_replacement(tag: str, url: str, source: dict[str, Any], destination: dict[str, Any] | None,
                      trust: Trust | None, now: datetime, owners: frozenset[str] = frozenset()) -> str | None:
    """None when ``source`` may replace ``destination``; a note when the destination's is kept as newer (or as
    new); else raise :class:`StatusReplaceRefused` (module docstring)."""
    seq = sequence_of(source)
    head = (f"copy: {tag}: the source's status list ({statuslist.SEQUENCE} {'none' if seq is None else seq}) "
            "would replace the destination's, but")
    tail = "; the destination's list is kept and nothing was copied"
    if source.get("id") != url:
        raise StatusReplaceRefused(f"{head} its id {str(source.get('id'))[:80]} is not {url}{tail}")
    verdict = may_replace(source, destination, trust, now, there_name="the destination's", owners=owners)
    if verdict.ok:
        return None
    if verdict.code == reasons.STATUS_ROLLBACK:
        return (f"status list {tag}: the destination's is newer or as new (sequence {verdict.there} >= "
                f"{verdict.offered}); kept it (a mirror never rolls a list back)")
    hint = "" if trust is not None else " (give --trust FILE with the issuer's DID document)"
    raise StatusReplaceRefused(f"{head} {verdict.reason}{hint}{tail}")
