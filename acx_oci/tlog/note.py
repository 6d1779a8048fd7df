"""C2SP signed-note: text signed by Ed25519 keys, identified by name and a 4-byte key ID.

Checkpoints and witness cosignatures are notes, so this is the one parser both go through. It
follows the spec and Go's ``golang.org/x/mod/sumdb/note.Open``: valid UTF-8, no control character
but newline, the text ends at the *last* blank line, signatures from unknown keys are ignored
(kept, so a log can pass witness lines along), a known key whose signature fails rejects the
whole note, a repeated signature by one key counts once, and at most 100 signature lines.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from acx_oci.crypto import verify_ed25519
from acx_oci.errors import NoteInvalid, NoteUnverified

SIG_ED25519 = 0x01
SIG_COSIGNATURE_V1 = 0x04
MAX_SIGNATURES = 100
MAX_NOTE = 1 << 20
_DASH = "\u2014 "


def b64(data: bytes) -> str:
    """Standard base64 with padding (RFC 4648 section 4), as every C2SP text format uses."""
    return base64.b64encode(data).decode("ascii")


def unb64(text: str, what: str) -> bytes:
    """Strict standard base64 (no whitespace, padding required), else :class:`NoteInvalid`."""
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise NoteInvalid(f"{what}: not base64") from None


def valid_name(name: str) -> bool:
    """A key name: non-empty, no Unicode space, no ``+`` (it separates vkey fields)."""
    return bool(name) and "+" not in name and not any(c.isspace() for c in name)


def key_id(name: str, sig_type: int, public: bytes) -> int:
    """SHA-256(name || 0x0A || type || public key)[:4] as a big-endian uint32: the signed-note key ID."""
    digest = hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([sig_type]) + public).digest()
    return int.from_bytes(digest[:4], "big")


def raw_public(private: Ed25519PrivateKey) -> bytes:
    """The 32-byte RFC 8032 encoding of a key's public half (what key IDs and vkeys hash)."""
    return private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


@dataclass(frozen=True)
class Signature:
    """One signature line: the key's name, its key ID, and the signature bytes after the ID."""

    name: str
    key_id: int
    signature: bytes

    @property
    def line(self) -> str:
        """``— <name> base64(keyid || signature)\\n``."""
        return f"{_DASH}{self.name} {b64(struct.pack('>I', self.key_id) + self.signature)}\n"


@dataclass(frozen=True)
class Note:
    """A parsed note: its text (ending in a newline) and every signature line, verified or not."""

    text: str
    signatures: tuple[Signature, ...]

    def encode(self) -> bytes:
        """The note as bytes: text, a blank line, the signature lines."""
        return (self.text + "\n" + "".join(s.line for s in self.signatures)).encode("utf-8")


@dataclass(frozen=True)
class Verifier:
    """A trusted key: its name, ID and a check of (message, signature) for the note ``text``.

    A plain note key (type 0x01) signs the text itself; a cosigner key (type 0x04) signs the
    cosignature/v1 message instead, which :mod:`acx_oci.tlog.checkpoint` checks.
    """

    name: str
    key_id: int
    public: bytes
    sig_type: int = SIG_ED25519

    def vkey(self) -> str:
        """``name+hex(keyid)+base64(type || public key)``: how trust files name this key."""
        return f"{self.name}+{self.key_id:08x}+{b64(bytes([self.sig_type]) + self.public)}"

    def verify(self, text: str, signature: bytes) -> bool:
        """Ed25519 over the note text (type 0x01 only: a cosigner key's lines never pass as plain signatures)."""
        if self.sig_type != SIG_ED25519 or len(signature) != 64:
            return False
        return verify_ed25519(self.public, signature, text.encode("utf-8"))


def ed25519_verifier(name: str, public: bytes) -> Verifier:
    """The note verifier of an Ed25519 key under ``name`` (a log's key: origin = name)."""
    if not valid_name(name):
        raise NoteInvalid(f"{name[:80]!r} is not a note key name")
    if len(public) != 32:
        raise NoteInvalid("an Ed25519 public key is 32 bytes")
    return Verifier(name, key_id(name, SIG_ED25519, public), public)


def parse_vkey(vkey: str) -> tuple[str, int, int, bytes]:
    """``name+hash+base64`` → (name, key ID, signature type, public key), the ID checked against the key."""
    parts = vkey.split("+", 2)  # the base64 may itself hold a "+" (Go cuts twice, too)
    if len(parts) != 3 or not valid_name(parts[0]) or len(parts[1]) != 8:
        raise NoteInvalid(f"{vkey[:120]!r}: expected a verifier key name+hash+base64")
    try:
        kid = int(parts[1], 16)
    except ValueError:
        raise NoteInvalid(f"{vkey[:120]!r}: the key hash is not hex") from None
    if parts[1] != parts[1].lower():
        raise NoteInvalid(f"{vkey[:120]!r}: the key hash is not lowercase hex")
    material = unb64(parts[2], "verifier key")
    if len(material) != 33:
        raise NoteInvalid(f"{vkey[:120]!r}: not an Ed25519 key (type byte and 32 bytes)")
    sig_type, public = material[0], material[1:]
    if key_id(parts[0], sig_type, public) != kid:
        raise NoteInvalid(f"{vkey[:120]!r}: the key hash does not match the key")
    return parts[0], kid, sig_type, public


def verifier_from_vkey(vkey: str) -> Verifier:
    """A plain Ed25519 note :class:`Verifier` (type 0x01) from its vkey string; other types refused."""
    name, kid, sig_type, public = parse_vkey(vkey)
    if sig_type != SIG_ED25519:
        raise NoteInvalid(f"{vkey[:120]!r}: signature type {sig_type:#04x}, expected Ed25519 (0x01)")
    return Verifier(name, kid, public)


def sign_line(name: str, private: Ed25519PrivateKey, message: bytes, sig_type: int = SIG_ED25519,
              prefix: bytes = b"") -> Signature:
    """A signature line by ``private`` under ``name`` over ``message`` (``prefix`` goes before the signature)."""
    if not valid_name(name):
        raise NoteInvalid(f"{name[:80]!r} is not a note key name")
    return Signature(name, key_id(name, sig_type, raw_public(private)), prefix + private.sign(message))


def sign_text(text: str, name: str, private: Ed25519PrivateKey) -> bytes:
    """A new note: ``text`` (ending in a newline) signed by one Ed25519 key — how a log signs a checkpoint."""
    check_text(text)
    return Note(text, (sign_line(name, private, text.encode("utf-8")),)).encode()


def check_text(text: str) -> None:
    """Raise unless ``text`` can be a note's text: non-empty, newline-terminated, no other control char."""
    if not text.endswith("\n"):
        raise NoteInvalid("a note's text ends with a newline")
    if any(ord(c) < 0x20 and c != "\n" for c in text):
        raise NoteInvalid("a note holds no control character but newline")


def parse(data: bytes) -> Note:
    """Split a note into text and signature lines, checking only the format (no key is consulted)."""
    if len(data) > MAX_NOTE:
        raise NoteInvalid(f"a note of {len(data)} bytes (at most {MAX_NOTE})")
    try:
        whole = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NoteInvalid("a note is not UTF-8") from None
    if any(ord(c) < 0x20 and c != "\n" for c in whole):
        raise NoteInvalid("a note holds no control character but newline")
    split = whole.rfind("\n\n")
    if split < 0:
        raise NoteInvalid("a note has no blank line before its signatures")
    text, block = whole[:split + 1], whole[split + 2:]
    if not block or not block.endswith("\n"):
        raise NoteInvalid("a note has no signature lines, or they do not end in a newline")
    sigs: list[Signature] = []
    for line in block[:-1].split("\n"):
        if len(sigs) == MAX_SIGNATURES:
            raise NoteInvalid(f"more than {MAX_SIGNATURES} signatures on a note")
        sigs.append(parse_signature_line(line))
    return Note(text, tuple(sigs))


def parse_signature_line(line: str) -> Signature:
    """One ``— name base64`` line (without its newline) → :class:`Signature`."""
    if not line.startswith(_DASH):
        raise NoteInvalid("a signature line starts with an em dash and a space")
    name, sep, encoded = line[len(_DASH):].partition(" ")
    raw = unb64(encoded, "signature") if sep and encoded else b""
    if not valid_name(name) or len(raw) < 5:
        raise NoteInvalid("a malformed signature line")
    return Signature(name, int.from_bytes(raw[:4], "big"), raw[4:])


def open_note(data: bytes, verifiers: Sequence[Verifier]) -> tuple[Note, list[Verifier]]:
    """Parse and verify a note; return it and the trusted keys whose signatures verified (at least one).

    Raises :class:`NoteUnverified` when no trusted key signed it or a trusted key's signature
    fails (cosignatures sign another message: :func:`acx_oci.tlog.checkpoint.verify_cosigned`).
    """
    note = parse(data)
    known = {(v.name, v.key_id): v for v in verifiers}
    seen: list[Verifier] = []
    for sig in note.signatures:
        v = known.get((sig.name, sig.key_id))
        if v is None or v in seen:
            continue
        if not v.verify(note.text, sig.signature):
            raise NoteUnverified(f"the signature of {sig.name}+{sig.key_id:08x} on the note does not verify")
        seen.append(v)
    if not seen:
        raise NoteUnverified("no trusted key signed the note")
    return note, seen


def with_signatures(data: bytes, lines: Sequence[Signature]) -> bytes:
    """The note with ``lines`` added after its own (a repeated line is kept once): witnesses' cosignatures."""
    note = parse(data)
    sigs = list(note.signatures)
    for s in lines:
        if s not in sigs:
            sigs.append(s)
    if len(sigs) > MAX_SIGNATURES:
        raise NoteInvalid(f"more than {MAX_SIGNATURES} signatures on a note")
    return Note(note.text, tuple(sigs)).encode()
