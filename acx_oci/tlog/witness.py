"""C2SP tlog-witness ``add-checkpoint`` bodies, pure: the request a log sends and the answers it reads.

Kept apart from the HTTP exchange (:mod:`acx_oci.net.witness`) so the exact wire format —
``old <size>``, one base64 hash per line, a blank line, the checkpoint — is tested without a
socket, and a test witness can parse what the client sends with the same code.
"""

from __future__ import annotations

from collections.abc import Sequence

from acx_oci.errors import NoteInvalid
from acx_oci.tlog.merkle import HASH_SIZE
from acx_oci.tlog.note import Signature, b64, parse, parse_signature_line, unb64

MAX_PROOF_LINES = 63  # the spec's bound on consistency proof lines
MAX_ANSWER = 64 * 1024


def encode_add_checkpoint(old: int, proof: Sequence[bytes], checkpoint: bytes) -> bytes:
    """The ``add-checkpoint`` request body: old size line, proof lines, blank line, the signed checkpoint."""
    if old < 0:
        raise NoteInvalid("the old size is not negative")
    if len(proof) > MAX_PROOF_LINES or any(len(h) != HASH_SIZE for h in proof):
        raise NoteInvalid(f"a consistency proof is at most {MAX_PROOF_LINES} hashes of 32 bytes")
    parse(checkpoint)  # a malformed note is ours to catch, not the witness's
    head = f"old {old}\n" + "".join(b64(h) + "\n" for h in proof) + "\n"
    return head.encode("ascii") + checkpoint


def decode_add_checkpoint(body: bytes) -> tuple[int, list[bytes], bytes]:
    """(old size, proof, checkpoint note) from a request body; the inverse of :func:`encode_add_checkpoint`."""
    head, sep, checkpoint = body.partition(b"\n\n")
    if not sep:
        raise NoteInvalid("an add-checkpoint body has no blank line")
    try:
        lines = head.decode("ascii").split("\n")
    except UnicodeDecodeError:
        raise NoteInvalid("an add-checkpoint head is not ASCII") from None
    first = lines[0]
    size = first[4:]
    if not first.startswith("old ") or not size.isdigit() or (size != "0" and size.startswith("0")):
        raise NoteInvalid("an add-checkpoint body starts with 'old <size>'")
    proof = [unb64(line, "consistency proof line") for line in lines[1:]]
    if len(proof) > MAX_PROOF_LINES or any(len(h) != HASH_SIZE for h in proof):
        raise NoteInvalid(f"a consistency proof is at most {MAX_PROOF_LINES} hashes of 32 bytes")
    return int(size), proof, checkpoint


def parse_conflict(body: bytes) -> int:
    """The witness's latest cosigned size from a 409 answer (``<decimal>\\n``, ``text/x.tlog.size``)."""
    text = body.decode("ascii", errors="replace")
    digits = text[:-1] if text.endswith("\n") else text
    if not digits.isdigit() or len(digits) > 20 or (digits != "0" and digits.startswith("0")):
        raise NoteInvalid(f"a 409 answer that is not a tree size: {text[:40]!r}")
    return int(digits)


def parse_cosignatures(body: bytes) -> list[Signature]:
    """The signature lines of a 200 answer (each ``— name base64\\n``); nothing else is allowed in it."""
    if len(body) > MAX_ANSWER:
        raise NoteInvalid(f"a witness answer of {len(body)} bytes")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise NoteInvalid("a witness answer is not UTF-8") from None
    if not text.endswith("\n"):
        raise NoteInvalid("a witness answer is signature lines, each ending in a newline")
    return [parse_signature_line(line) for line in text[:-1].split("\n")]
