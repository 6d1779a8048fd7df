"""A level credential as one typed, read-only value: parsed once, its bytes kept for proofs and digests.

The judge, the gateway's push check, ``vc verify`` and ``copy`` all read the same handful of
fields (the issuer's DID, the capability, the ROM and manifest it is welded to, the benchmark,
the status entry); read from a ``dict[str, Any]`` each time, the superseding key was drawn three
ways. Here each is read once, by one rule, and the document itself is never re-serialized: proofs
and digests are over :attr:`LevelView.raw` (python-tuf parses metadata once into a type, the same way).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from acx_oci.model.credential import issuer_id, level_result, status_entries
from acx_oci.urls import without_fragment

SupersedeKey = tuple[str, str, str, str]  # (issuer DID, ROM digest, benchmark digest, capability id)


def supersede_key(issuer: str, rom_digest: str, benchmark_digest: str, capability_id: str) -> SupersedeKey:
    """Within one key only the newest credential decides: the one rule, for credentials and log entries alike."""
    return without_fragment(issuer), rom_digest, benchmark_digest, capability_id


def _text(result: Mapping[str, Any], name: str) -> str:
    value = result.get(name)
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class LevelView:
    """What a level credential says, read once (unverified until the judge says otherwise)."""

    document: Mapping[str, Any] = field(repr=False)  # the parsed JSON: read, never re-serialized
    raw: bytes | None = field(default=None, repr=False)  # the exact bytes (what the digest and proofs are over)
    digest: str | None = None
    issuer: str | None = None  # as written (``issuer`` or ``issuer.id``)
    capability_id: str = ""
    rom_digest: str = ""
    manifest_digest: str = ""
    benchmark_id: str = ""
    benchmark_version: str = ""
    benchmark_digest: str = ""
    status_url: str | None = None  # the first status entry's list (the one a consumer fetches)
    status_index: int | None = None
    valid_from: str = ""

    @classmethod
    def of(cls, document: Any, raw: bytes | None = None, digest: str | None = None) -> LevelView:
        """The view of an already-parsed document (any shape: a malformed field reads as empty)."""
        doc = document if isinstance(document, dict) else {}
        res = level_result(doc) or {}
        entries = status_entries(doc)
        url = entries[0].get("statusListCredential") if entries else None
        index = entries[0].get("statusListIndex") if entries else None
        valid_from = doc.get("validFrom")
        return cls(doc, raw, digest, issuer_id(doc), _text(res, "acx:capabilityId"),
                   _text(res, "acx:cartridgeRomDigest"), _text(res, "acx:cartridgeManifestDigest"),
                   str(res.get("acx:benchmarkId", "") or ""), str(res.get("acx:benchmarkVersion", "") or ""),
                   _text(res, "acx:benchmarkDigest"), url if isinstance(url, str) else None,
                   int(index) if isinstance(index, str) and index.isascii() and index.isdigit() else None,
                   valid_from if isinstance(valid_from, str) else "")

    @property
    def issuer_did(self) -> str | None:
        """The issuer's DID (a DID URL's fragment dropped)."""
        return without_fragment(self.issuer) if self.issuer is not None else None

    @property
    def result(self) -> Mapping[str, Any]:
        """The ``result[]`` entry with the ``acx:`` fields (empty when there is none)."""
        return level_result(self.document) or {}

    def supersede_key(self, capability_id: str | None = None) -> SupersedeKey:
        """The key this credential *claims* (before it verifies); ``capability_id``: the claim it counts for."""
        return supersede_key(self.issuer or "", self.rom_digest, self.benchmark_digest,
                             self.capability_id if capability_id is None else capability_id)
