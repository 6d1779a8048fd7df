"""A log proof: what travels beside a credential so a consumer can check it is in the verifier's log.

One small document holds the entry as logged, its index, the RFC 6962 inclusion path and the
signed (and cosigned) checkpoint the path leads to. A consumer checks it offline against the
trust file's log key and witness keys, and needs the registry only to compare the checkpoint with
the newest one it has seen (consistency). Pure: bytes in, verdicts out.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from acx_oci.crypto import canonical
from acx_oci.errors import AcxError, NotLogged
from acx_oci.jsonio import parse_json
from acx_oci.tlog.checkpoint import Cosigned, Cosigner, verify_cosigned
from acx_oci.tlog.merkle import HASH_SIZE, MAX_PROOF, leaf_hash, verify_inclusion
from acx_oci.tlog.note import MAX_NOTE, Verifier

MEDIA_TYPE = "application/vnd.acx.log-proof.v1+json"
SCHEMA_VERSION = "acx.log-proof/1"
MAX_PROOF_DOC = MAX_NOTE + 0xFFFF * 2 + 8 * 1024  # a note, an entry (escaped), the path
_FIELDS = {"schemaVersion", "origin", "index", "entry", "inclusion", "checkpoint"}


@dataclass(frozen=True)
class LogProof:
    """Entry ``index`` of the log ``origin``, the path to the root of ``checkpoint`` (a signed note's bytes)."""

    origin: str
    index: int
    entry: dict[str, Any]
    inclusion: tuple[bytes, ...]
    checkpoint: bytes

    def leaf(self) -> bytes:
        """The leaf bytes: the entry in RFC 8785 form (what the log appended)."""
        return canonical(self.entry)

    def to_json(self) -> dict[str, Any]:
        """The document as stored (hashes and the note in standard base64 / UTF-8 text)."""
        return {"schemaVersion": SCHEMA_VERSION, "origin": self.origin, "index": self.index, "entry": self.entry,
                "inclusion": [base64.b64encode(h).decode() for h in self.inclusion],
                "checkpoint": self.checkpoint.decode()}

    def to_bytes(self) -> bytes:
        """Canonical bytes, so the same proof is the same blob digest wherever it is pushed."""
        return canonical(self.to_json())


def parse_proof(data: bytes, what: str = "log proof") -> LogProof:
    """Bounded parse of a proof document; any deviation is :class:`NotLogged` (the entry cannot be shown)."""
    if len(data) > MAX_PROOF_DOC:
        raise NotLogged(f"{what}: {len(data)} bytes, more than the {MAX_PROOF_DOC} a proof can need")
    try:
        doc = parse_json(data, what)
    except AcxError as exc:  # a malformed proof is the same verdict as a missing one
        raise NotLogged(f"{what}: {exc}") from None
    if not isinstance(doc, dict) or set(doc) != _FIELDS or doc.get("schemaVersion") != SCHEMA_VERSION:
        raise NotLogged(f"{what}: expected an object with exactly {sorted(_FIELDS)} and schemaVersion "
                        f"{SCHEMA_VERSION}")
    index, path = doc["index"], doc["inclusion"]
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise NotLogged(f"{what}: index must be a non-negative integer, found {index!r}")
    if not isinstance(doc["origin"], str) or not isinstance(doc["entry"], dict) \
            or not isinstance(doc["checkpoint"], str) or not isinstance(path, list) or len(path) > MAX_PROOF:
        raise NotLogged(f"{what}: origin, entry, checkpoint or inclusion has the wrong type or size")
    hashes = []
    for h in path:
        try:
            raw = base64.b64decode(h, validate=True) if isinstance(h, str) else b""
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != HASH_SIZE:
            raise NotLogged(f"{what}: an inclusion hash is not {HASH_SIZE} bytes of base64")
        hashes.append(raw)
    return LogProof(doc["origin"], index, doc["entry"], tuple(hashes), doc["checkpoint"].encode())


def check_proof(proof: LogProof, log: Verifier, witnesses: Sequence[Cosigner], quorum: int,
                *, now: int | None = None) -> Cosigned:
    """The checkpoint is the log's with ``quorum`` cosignatures, and the entry is in it at ``index``.

    Raises :class:`~acx_oci.errors.NoteUnverified` (signatures) or :class:`NotLogged` (the path);
    whether the entry describes *this* credential is the caller's comparison.
    """
    cosigned = verify_cosigned(proof.checkpoint, log, witnesses, quorum, origin=proof.origin, now=now)
    cp = cosigned.checkpoint
    if proof.index >= cp.size:
        raise NotLogged(f"entry {proof.index} is beyond the checkpoint's size {cp.size}")
    verify_inclusion(proof.index, cp.size, leaf_hash(proof.leaf()), proof.inclusion, cp.root)
    return cosigned
