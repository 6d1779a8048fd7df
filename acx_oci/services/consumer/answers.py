"""The caller's side of the judge's questions: run the judge, fetch what it asks for, send the answer back.

The judge (:func:`acx_oci.evaluation.judge.judging`, :func:`acx_oci.evaluation.accept.accepting`) yields
:class:`~acx_oci.evaluation.judge.NeedReplay` and :class:`~acx_oci.evaluation.judge.NeedDidDocument` instead
of calling out (python-tuf's shape); :func:`answer_needs` answers each with the caller's replay and
:class:`~acx_oci.services.consumer.did_keys.DidFetcher`. A need with no one to answer it gets None: undecided
for a replay, "no document" for a DID (the judge then fails closed, as offline).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TypeVar

from acx_oci.evaluation import Answer, Check, Need, NeedReplay
from acx_oci.model import AcceptedCredential
from acx_oci.services.consumer.did_keys import DidFetcher

T = TypeVar("T")
Replay = Callable[[AcceptedCredential], "Check | None"]


def answer_needs(steps: Generator[Need, Answer, T], *, replay: Replay | None = None,
                 dids: DidFetcher | None = None) -> T:
    """Drive the judge to its result, answering each need (a replay with ``replay``, a DID with ``dids``)."""
    try:
        need = next(steps)
        while True:
            if isinstance(need, NeedReplay):
                answer: Answer = replay(need.accepted) if replay is not None else None
            else:
                answer = dids.document(need.did) if dids is not None else None
            need = steps.send(answer)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
