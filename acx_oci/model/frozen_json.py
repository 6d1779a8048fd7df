"""A JSON object carried inward as a frozen type: what a sealed record and a credential read at the door share.

Nothing reached through it can change it (each read is a copy), so a fact checked once at the door still holds
where it is used; the typed facts live on the subclasses.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any


class FrozenJson(Mapping[str, Any]):
    """A frozen JSON object: read like a mapping (copies out), serialised by :meth:`to_json`."""

    __slots__ = ("_doc",)
    _doc: dict[str, Any]
    _KIND = "document"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a {self._KIND} is frozen")

    def __getitem__(self, key: str) -> Any:
        return copy.deepcopy(self._doc[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._doc)

    def __len__(self) -> int:
        return len(self._doc)

    def to_json(self) -> dict[str, Any]:
        """The JSON object as held (a copy): what is written, sent, or checked over."""
        return copy.deepcopy(self._doc)
