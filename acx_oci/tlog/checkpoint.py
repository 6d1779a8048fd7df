"""C2SP tlog-checkpoint and tlog-cosignature/v1: a log's signed tree head and witnesses' timestamped cosignatures.

A checkpoint is a signed note whose text is ``origin\\nsize\\nbase64(root)\\n[extension lines]``;
the log signs it with its Ed25519 key under a name that equals the origin. A witness that checked
the checkpoint is consistent with everything it saw before adds a *cosignature* (key ID type
0x04): an Ed25519 signature over ``cosignature/v1\\ntime <t>\\n`` + the checkpoint text, prefixed
by the big-endian u64 time. A consumer that needs K of N witnesses counts verified cosignatures,
so a log that shows two histories must fool K witnesses at once.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from acx_oci.crypto import verify_ed25519
from acx_oci.errors import NoteInvalid, NoteUnverified
from acx_oci.tlog.merkle import HASH_SIZE
from acx_oci.tlog.note import (
    SIG_COSIGNATURE_V1,
    Signature,
    Verifier,
    b64,
    check_text,
    key_id,
    open_note,
    parse,
    parse_vkey,
    sign_line,
    sign_text,
    unb64,
    valid_name,
)

MAX_TIMESTAMP = (1 << 63) - 1
_SIZE_DIGITS = 20  # a uint64


def sigsum_origin(log_public: bytes) -> str:
    """``sigsum.org/v1/tree/<hex sha256(raw Ed25519 public key)>``: the origin Sigsum witnesses expect."""
    if len(log_public) != 32:
        raise NoteInvalid("an Ed25519 public key is 32 bytes")
    return "sigsum.org/v1/tree/" + hashlib.sha256(log_public).hexdigest()


@dataclass(frozen=True)
class Checkpoint:
    """A tree head: the log's origin, its size, the RFC 6962 root at that size, and extension lines."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def text(self) -> str:
        """The note text exactly as tlog-checkpoint draws it (what the log and the witnesses sign)."""
        if not self.origin or "\n" in self.origin:
            raise NoteInvalid("a checkpoint's origin is one non-empty line")
        if self.size < 0 or len(self.root) != HASH_SIZE:
            raise NoteInvalid("a checkpoint has a size >= 0 and a 32-byte root")
        if any(not e or "\n" in e for e in self.extensions):
            raise NoteInvalid("a checkpoint's extension lines are non-empty single lines")
        text = "".join(line + "\n" for line in (self.origin, str(self.size), b64(self.root), *self.extensions))
        check_text(text)
        return text


def parse_checkpoint_text(text: str) -> Checkpoint:
    """The checkpoint a note text holds; :class:`NoteInvalid` unless it is exactly tlog-checkpoint's form."""
    if not text.endswith("\n"):
        raise NoteInvalid("a checkpoint's text ends with a newline")
    lines = text[:-1].split("\n")
    if len(lines) < 3 or any(not line for line in lines):
        raise NoteInvalid("a checkpoint is at least three non-empty lines")
    origin, size_s, root_s, *ext = lines
    if not size_s.isascii() or not size_s.isdigit() or len(size_s) > _SIZE_DIGITS \
            or (size_s != "0" and size_s.startswith("0")):
        raise NoteInvalid(f"checkpoint size {size_s[:40]!r}: decimal with no leading zero")
    root = unb64(root_s, "checkpoint root hash")
    if len(root) != HASH_SIZE or b64(root) != root_s:
        raise NoteInvalid("a checkpoint root hash is 32 bytes of base64")
    size = int(size_s)
    if size >= 1 << 64:
        raise NoteInvalid("a checkpoint size above 2**64")
    return Checkpoint(origin, size, root, tuple(ext))


def sign_checkpoint(cp: Checkpoint, private: Ed25519PrivateKey, name: str | None = None) -> bytes:
    """The signed checkpoint note; the key name is the origin unless ``name`` says otherwise."""
    return sign_text(cp.text(), name or cp.origin, private)


def open_checkpoint(data: bytes, log: Verifier, origin: str | None = None) -> Checkpoint:
    """Verify a checkpoint note's log signature and return its tree head.

    The origin must be ``origin`` (default: the log key's name, which tlog-checkpoint says it
    should match), so one log's checkpoint never passes for another's.
    """
    note, _ = open_note(data, [log])
    cp = parse_checkpoint_text(note.text)
    want = log.name if origin is None else origin
    if cp.origin != want:
        raise NoteUnverified(f"checkpoint origin {cp.origin[:120]!r}, expected {want[:120]!r}")
    return cp


def cosigned_message(text: str, timestamp: int) -> bytes:
    """``cosignature/v1\\ntime <t>\\n`` + the checkpoint text: the bytes a witness signs."""
    if not 0 <= timestamp <= MAX_TIMESTAMP:
        raise NoteInvalid("a cosignature timestamp is 0..2**63-1")
    return f"cosignature/v1\ntime {timestamp}\n{text}".encode()


@dataclass(frozen=True)
class Cosigner:
    """A witness's public identity for cosignature/v1: name and Ed25519 key (key ID type 0x04)."""

    name: str
    public: bytes

    @property
    def key_id(self) -> int:
        """SHA-256(name || 0x0A || 0x04 || public key)[:4]."""
        return key_id(self.name, SIG_COSIGNATURE_V1, self.public)

    def vkey(self) -> str:
        """``name+hash+base64(0x04 || key)``, how a trust file names a required witness."""
        return f"{self.name}+{self.key_id:08x}+{b64(bytes([SIG_COSIGNATURE_V1]) + self.public)}"

    def verifier(self) -> Verifier:
        """The note :class:`Verifier` this cosigner's lines match (by name and key ID)."""
        return Verifier(self.name, self.key_id, self.public, SIG_COSIGNATURE_V1)


def cosigner_from_vkey(vkey: str) -> Cosigner:
    """A :class:`Cosigner` from its vkey; a key of any other type than 0x04 is refused."""
    name, _, sig_type, public = parse_vkey(vkey)
    if sig_type != SIG_COSIGNATURE_V1:
        raise NoteInvalid(f"{vkey[:120]!r}: signature type {sig_type:#04x}, expected a cosignature/v1 key (0x04)")
    return Cosigner(name, public)


def cosign(text: str, name: str, private: Ed25519PrivateKey, timestamp: int) -> Signature:
    """A cosignature/v1 line on a checkpoint text (what a witness returns; used by tests and tools)."""
    if not valid_name(name):
        raise NoteInvalid(f"{name[:80]!r} is not a note key name")
    return sign_line(name, private, cosigned_message(text, timestamp), SIG_COSIGNATURE_V1,
                     prefix=struct.pack(">Q", timestamp))


def cosignature_time(signature: bytes) -> int:
    """The timestamp of a timestamped_signature (u64 big-endian, then 64 signature bytes)."""
    if len(signature) != 8 + 64:
        raise NoteInvalid("a cosignature/v1 signature is 8 + 64 bytes")
    t = int.from_bytes(signature[:8], "big")
    if t > MAX_TIMESTAMP:
        raise NoteInvalid("a cosignature timestamp above 2**63-1")
    return t


def _check_cosignature(v: Verifier, text: str, signature: bytes) -> bool:
    if len(signature) != 72:
        return False
    (t,) = struct.unpack(">Q", signature[:8])
    return t <= MAX_TIMESTAMP and verify_ed25519(v.public, signature[8:], cosigned_message(text, t))


@dataclass(frozen=True)
class Cosigned:
    """A checkpoint verified as the log's, and the witnesses whose cosignatures verified (with their times)."""

    checkpoint: Checkpoint
    witnesses: tuple[tuple[Cosigner, int], ...]


def verify_cosigned(data: bytes, log: Verifier, witnesses: Sequence[Cosigner], quorum: int,
                    *, origin: str | None = None, now: int | None = None) -> Cosigned:
    """Check the log's signature and at least ``quorum`` distinct witnesses' cosignatures on a checkpoint.

    A cosignature line by a known witness that does not verify rejects the note (signed-note's
    rule); lines by unknown keys are ignored; with ``now``, a cosignature dated more than a day
    ahead of it is refused (the spec lets verifiers refuse future timestamps).
    """
    cp = open_checkpoint(data, log, origin)
    note = parse(data)
    known = {(w.name, w.key_id): w for w in witnesses}
    good: dict[Cosigner, int] = {}
    for sig in note.signatures:
        w = known.get((sig.name, sig.key_id))
        if w is None or w in good:
            continue
        if not _check_cosignature(w.verifier(), note.text, sig.signature):
            raise NoteUnverified(f"the cosignature of witness {w.name}+{w.key_id:08x} does not verify")
        t = cosignature_time(sig.signature)
        if now is not None and t > now + 86400:
            raise NoteUnverified(f"the cosignature of witness {w.name} is dated in the future ({t})")
        good[w] = t
    if len(good) < quorum:
        raise NoteUnverified(f"{len(good)} of the {quorum} witness cosignatures required on the checkpoint "
                             f"of size {cp.size}")
    return Cosigned(cp, tuple(good.items()))


def open_cosignatures(text: str, lines: Sequence[Signature], witnesses: Sequence[Cosigner]) -> list[Signature]:
    """The lines among a witness's answer that are valid cosignatures by ``witnesses`` on ``text``."""
    known = {(w.name, w.key_id): w for w in witnesses}
    out: list[Signature] = []
    for sig in lines:
        w = known.get((sig.name, sig.key_id))
        if w is not None and _check_cosignature(w.verifier(), text, sig.signature):
            out.append(sig)
    return out


def sigsum_cosigner(public: bytes) -> Cosigner:
    """A Sigsum witness's identity: it cosigns as ``sigsum.org/v1/witness/<hex sha256(its key)>``."""
    if len(public) != 32:
        raise NoteInvalid("an Ed25519 public key is 32 bytes")
    return Cosigner("sigsum.org/v1/witness/" + hashlib.sha256(public).hexdigest(), public)
