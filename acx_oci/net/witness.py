"""A C2SP tlog-witness client: submit a checkpoint with its consistency proof, get cosignatures back.

The log does not know for sure which size a witness last cosigned (a crash, another log process,
an earlier run), so it sends its best guess and, on ``409 Conflict``, retries once with a proof
from the size the witness names — the flow tlog-witness describes. Every exchange goes through
:func:`acx_oci.net.https.request` (deadline, byte cap, loopback-only plain HTTP, no redirects),
and the answer's lines are kept only when they verify as the named witness's cosignatures on
exactly the checkpoint sent: a witness that answers garbage counts as no witness.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from acx_oci.errors import LogInconsistent, NoteInvalid, WitnessRefused
from acx_oci.net import https
from acx_oci.tlog import (
    MAX_ANSWER,
    Cosigner,
    Signature,
    encode_add_checkpoint,
    open_cosignatures,
    parse,
    parse_checkpoint_text,
    parse_conflict,
    parse_cosignatures,
)

DEFAULT_DEADLINE = 10.0
CONTENT_TYPE = "text/plain; charset=utf-8"

#: ``proof_from(old)`` -> the consistency proof from tree size ``old`` to the checkpoint's size.
ProofFrom = Callable[[int], list[bytes]]


@dataclass(frozen=True)
class Cosignature:
    """What one witness gave: its verified cosignature lines and the size it has now cosigned."""

    witness: Cosigner
    lines: tuple[Signature, ...]
    size: int


def add_checkpoint(prefix: str, checkpoint: bytes, witness: Cosigner, proof_from: ProofFrom, *,
                   old: int = 0, deadline: float = DEFAULT_DEADLINE) -> Cosignature:
    """POST ``checkpoint`` to ``<prefix>/add-checkpoint`` with a proof from ``old``; the witness's cosignature.

    On 409 the witness names the size it last cosigned: the request is sent once more with a proof
    from that size (a size above the checkpoint's means this log once showed the witness a bigger
    tree: :class:`LogInconsistent`). Any other refusal is :class:`WitnessRefused` with its status.
    """
    note = parse(checkpoint)
    size = parse_checkpoint_text(note.text).size
    url = prefix.rstrip("/") + "/add-checkpoint"
    for attempt in (0, 1):
        body = encode_add_checkpoint(old, proof_from(old) if old else [], checkpoint)
        status, _, answer = https.request("POST", url, max_bytes=MAX_ANSWER, body=body, content_type=CONTENT_TYPE,
                                          accept="text/plain", deadline=deadline, read=(200, 409))
        if status == 200:
            lines = open_cosignatures(note.text, parse_cosignatures(answer), [witness])
            if not lines:
                raise WitnessRefused(f"{url}: no valid cosignature by {witness.name} in the answer", status)
            return Cosignature(witness, tuple(lines), size)
        if status != 409 or attempt:
            raise WitnessRefused(f"{url}: HTTP {status} for the checkpoint of size {size} (from old size {old})",
                                 status)
        try:
            known = parse_conflict(answer)
        except NoteInvalid:
            raise WitnessRefused(f"{url}: a 409 answer without a tree size", status) from None
        if known > size:
            raise LogInconsistent(f"{url}: the witness has cosigned size {known}, above this checkpoint's {size}")
        old = known
    raise AssertionError("unreachable")  # pragma: no cover
