"""The level credential as a type from the door inward: read once where it is fetched or loaded, then carried
frozen through the judge, replay, status, copy, the gateway and the CLI.

A ``dict[str, Any]`` passed from hand to hand was re-read at every stop (:class:`LevelView` rebuilt nine
times) and could be changed by any of them between the proof check and the verdict. Here the bytes are
read once (:meth:`LevelCredential.read`, or :meth:`LevelCredential.claims` for the quicker parse that only
orders the judge's walk), their :class:`LevelView` is taken once, and nothing reached through the type can
change it (``credential["proof"]`` is a copy). The proofs and digests stay over what they were over: the
exact bytes (:attr:`LevelCredential.raw`) and the JCS of the parsed document (:meth:`LevelCredential.to_json`).
Like sigstore-python's ``Bundle.from_json`` and python-tuf's ``Metadata[Root]``, and like
:class:`acx_oci.model.exam_record.CertificationRecord` here.
"""

from __future__ import annotations

import copy
from typing import Any

from acx_oci.crypto import sha256_digest
from acx_oci.errors import SchemaError
from acx_oci.jsonio import as_array, loads_claims, parse_json
from acx_oci.model.credential import status_entries
from acx_oci.model.frozen_json import FrozenJson
from acx_oci.model.level_view import LevelView


class LevelCredential(FrozenJson):
    """One level credential as read at the door: frozen, its bytes kept, its claims read once (unverified)."""

    __slots__ = ("_raw", "_strict", "_view")
    _KIND = "level credential"
    _raw: bytes | None
    _strict: bool
    _view: LevelView

    def __init__(self, doc: Any, raw: bytes | None = None, *, _door: bool = False, _strict: bool = True) -> None:
        if not _door:  # the ways in are read(), claims() and document(): a dict is never taken on its word
            raise TypeError("use LevelCredential.read(), LevelCredential.claims() or LevelCredential.document()")
        if not isinstance(doc, dict):
            raise TypeError(f"a level credential is a JSON object, not {type(doc).__name__}")
        object.__setattr__(self, "_doc", doc)
        object.__setattr__(self, "_raw", raw)
        object.__setattr__(self, "_strict", _strict)
        object.__setattr__(self, "_view", LevelView.of(doc, raw))  # (no digest: the fetcher has one)

    def __reduce__(self) -> tuple[Any, ...]:  # (pickled and copied through its door, never attribute by attribute)
        return _rebuilt, (self._doc, self._raw, self._strict)

    def __deepcopy__(self, memo: dict[int, Any]) -> LevelCredential:
        return self  # (frozen: a copy would be the same value)

    # --- the doors -----------------------------------------------------------------------------------------

    @classmethod
    def read(cls, raw: bytes, where: str = "credential") -> LevelCredential:
        """The credential ``raw`` holds, parsed strictly (I-JSON); :class:`SchemaError` when it is not an object."""
        cred = cls.read_object(raw, where)
        if cred is None:
            raise SchemaError(f"{where}: the credential is not a JSON object")
        return cred

    @classmethod
    def read_object(cls, raw: bytes, where: str = "credential") -> LevelCredential | None:
        """:meth:`read`, but None when ``raw`` is JSON and not an object (a reader that skips those)."""
        doc = parse_json(raw, where)
        return cls(doc, bytes(raw), _door=True) if isinstance(doc, dict) else None

    @classmethod
    def claims(cls, raw: bytes, where: str = "credential") -> LevelCredential | None:
        """What ``raw`` *claims*, by the quicker parse (:func:`acx_oci.jsonio.loads_claims`) when it can: enough to
        order candidates, never to verify (:meth:`strictly` first). Not JSON: the strict parser's error; JSON but
        not an object: None (the caller says why)."""
        doc = loads_claims(raw)
        strict = doc is None
        if strict:
            doc = parse_json(raw, where)
        return cls(doc, bytes(raw), _door=True, _strict=strict) if isinstance(doc, dict) else None

    @classmethod
    def document(cls, doc: Any) -> LevelCredential:
        """A document already parsed (a file read as JSON, a freshly signed credential): kept as a copy, no bytes."""
        return cls(copy.deepcopy(doc), _door=True)

    @classmethod
    def empty(cls) -> LevelCredential:
        """No credential (``{}``): what an accepted credential built without one (a test's, a policy's) holds."""
        return cls({}, _door=True)

    def strictly(self, where: str = "credential") -> LevelCredential:
        """This credential parsed strictly (itself when it was): what the judge verifies and accepts."""
        if self._strict or self._raw is None:
            return self
        return LevelCredential.read(self._raw, where)

    # --- the JSON view -------------------------------------------------------------------------------------

    def __repr__(self) -> str:
        return f"LevelCredential({self.view.issuer!r}, {self.view.capability_id!r}, {self.digest})"

    # --- typed facts ---------------------------------------------------------------------------------------

    @property
    def raw(self) -> bytes | None:
        """The exact bytes it was read from (None: built from a parsed document)."""
        return self._raw

    @property
    def digest(self) -> str | None:
        """sha256 over :attr:`raw`, computed when asked (None without bytes)."""
        return sha256_digest(self._raw) if self._raw is not None else None

    @property
    def strict(self) -> bool:
        """Parsed strictly (False: only the quicker parse of what it claims; :meth:`strictly` before verifying)."""
        return self._strict

    @property
    def view(self) -> LevelView:
        """What it says, read once: issuer, capability, ROM, benchmark, status entry, validFrom."""
        return self._view

    @property
    def issuer(self) -> str | None:
        """The issuer's id as written (``issuer`` or ``issuer.id``)."""
        return self._view.issuer

    @property
    def subject_id(self) -> str | None:
        """The (first) credential subject's id, when it is a string."""
        subject = self._doc.get("credentialSubject")
        if isinstance(subject, list):
            subject = subject[0] if subject else None
        value = subject.get("id") if isinstance(subject, dict) else None
        return value if isinstance(value, str) else None

    @property
    def result(self) -> dict[str, Any]:
        """The ``result[]`` entry with the ``acx:`` fields, a copy ({} when there is none)."""
        return copy.deepcopy(dict(self._view.result))

    @property
    def evidence(self) -> list[Any]:
        """The ``evidence`` items (a copy; [] when it is not an array)."""
        return copy.deepcopy(as_array(self._doc.get("evidence")))

    @property
    def proofs(self) -> list[Any]:
        """The ``proof`` entries, object or array, as a list (a copy)."""
        proofs = self._doc.get("proof")
        return copy.deepcopy(proofs if isinstance(proofs, list) else [proofs])

    @property
    def status_entries(self) -> list[dict[str, Any]]:
        """Every ``BitstringStatusListEntry`` in ``credentialStatus`` (a copy)."""
        return copy.deepcopy(status_entries(self._doc))

    @property
    def valid_from(self) -> Any:
        """``validFrom`` as written (any shape: the schema is checked with the other rules)."""
        return self._doc.get("validFrom")

    @property
    def valid_until(self) -> Any:
        """``validUntil`` as written (None when absent)."""
        return self._doc.get("validUntil")


def _rebuilt(doc: dict[str, Any], raw: bytes | None, strict: bool) -> LevelCredential:
    return LevelCredential(doc, raw, _door=True, _strict=strict)


def level_credential(value: Any, where: str = "credential") -> LevelCredential:
    """``value`` when it is a :class:`LevelCredential`; a clear TypeError when a plain document reaches past the
    door (read it with :meth:`LevelCredential.read` where it is fetched or loaded)."""
    if isinstance(value, LevelCredential):
        return value
    raise TypeError(f"{where}: expected a LevelCredential (read at the door), got {type(value).__name__}")
