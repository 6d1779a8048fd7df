"""A URL's fragment, cut in one place (stdlib only, pure).

A DID URL (``did:web:example.com#key-1``), a status list URL and a purl's subpath all end in ``#...``;
comparing a DID URL with the DID it belongs to, or a key id with a trust file's entry, needs the part before
the first ``#``. Written once here so every caller cuts at the same ``#`` (the first: a fragment may itself
hold ``#``) and none forgets the cut.
"""

from __future__ import annotations


def split_fragment(url: str) -> tuple[str, str]:
    """``base#fragment`` -> (``base``, ``fragment``), cut at the first ``#``; no ``#``: (``url``, ``""``)."""
    base, _, fragment = url.partition("#")
    return base, fragment


def without_fragment(url: str) -> str:
    """The URL before its first ``#`` (for a DID URL: the DID it belongs to)."""
    return split_fragment(url)[0]
