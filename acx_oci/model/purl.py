"""Package URLs (purl) for capability stacks: parsed and validated by ``packageurl-python``, written in our form.

Parsing, type rules (registered types, required namespaces) and percent-decoding are the library's, so a
purl means here what it means to every other purl tool. The *written* form is the reference
implementation's (trim, lower-case everything, Maven included -- the purl spec keeps Maven case), so
capability ids stay the reference's: a component keeps every character the reference kept as typed,
``+`` included (a deb version ``1+deb9u1`` stays ``1+deb9u1``); only what would change the purl's
reading is percent-encoded. In the capability grammar, whose stack separator is ``+``, :func:`grammar_form`
writes ``+`` as ``%2B`` (the purl spec's own encoding), which parses back to the same purl.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from urllib.parse import quote

from packageurl import PackageURL, ValidationSeverity
from packageurl.validate import DEFINITIONS_BY_TYPE

from acx_oci.errors import UsageError
from acx_oci.urls import split_fragment

#: Registered purl types (package-url/purl-spec, as packageurl-python knows them); we never invent others.
PURL_TYPES: frozenset[str] = frozenset(DEFINITIONS_BY_TYPE)

# Characters a component keeps unencoded besides A-Z a-z 0-9 ``-._~`` (RFC 3986 pchar minus what would
# end that component when the purl is read again: ``@`` ends a name, ``&``/``=`` a qualifier).
_NAMESPACE_SAFE = "!$&'()*+,;=:@"
_NAME_SAFE = "!$&'()*+,;=:"
_VALUE_SAFE = "!$'()*+,;:@/"
_SUBPATH_SAFE = "!$&'()*+,;=:@"

# What may appear unencoded in a purl string (RFC 3986 unreserved, sub-delims, the purl separators, '%').
_RAW_OK = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:/@?#%]")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class Purl:
    """A validated purl, components decoded and lower-cased (the reference implementation's normalization)."""

    type: str
    namespace: str | None
    name: str
    version: str | None
    qualifiers: tuple[tuple[str, str], ...]
    subpath: str | None

    def canonical(self) -> str:
        """The stored form: what capability ids hash (see the module docstring)."""
        out = ["pkg:", self.type, "/"]
        if self.namespace:
            out += ["/".join(quote(s, safe=_NAMESPACE_SAFE) for s in self.namespace.split("/")), "/"]
        out.append(quote(self.name, safe=_NAME_SAFE))
        if self.version:
            out += ["@", quote(self.version, safe=_NAME_SAFE)]
        if self.qualifiers:
            out += ["?", "&".join(f"{k}={quote(v, safe=_VALUE_SAFE)}" for k, v in self.qualifiers)]
        if self.subpath:
            out += ["#", "/".join(quote(s, safe=_SUBPATH_SAFE) for s in self.subpath.split("/"))]
        return "".join(out)


def _refuse(text: str, reason: str) -> UsageError:
    return UsageError(f"stack token {text!r}: not a valid purl: {reason}")


def _check_raw(text: str, t: str) -> None:
    """What packageurl-python tolerates but the purl spec does not: raw spaces, bad escapes, repeated keys."""
    for ch in t:
        if not _RAW_OK.match(ch):
            enc = quote(ch, safe="")
            raise _refuse(text, f"{ch!r} must be percent-encoded as {enc} (a purl is a URL string)")
    if _BAD_ESCAPE.search(t):
        raise _refuse(text, "'%' must start a percent-encoded byte (%XX) or be written %25")
    head, subpath = split_fragment(t)
    path, _, query = head.partition("?")
    if path.endswith("@"):
        raise _refuse(text, "'@' must be followed by a version")
    keys = [kv.partition("=")[0] for kv in query.split("&") if kv] if query else []
    dup = next((k for k in keys if keys.count(k) > 1), None)
    if dup is not None:
        raise _refuse(text, f"qualifier key {dup!r} appears twice (qualifier keys must be unique)")
    if any(seg in (".", "..") for seg in subpath.split("/")):
        raise _refuse(text, "a subpath segment may not be '.' or '..'")


def parse_purl(text: str) -> Purl:
    """Parse and validate ``pkg:TYPE/[NAMESPACE/]NAME[@VERSION][?QUALIFIERS][#SUBPATH]``; UsageError naming why not."""
    t = str(text).strip().lower()
    _check_raw(text, t)
    ptype = t[4:].partition("/")[0] if t.startswith("pkg:") else ""
    if ptype and "/" in t[4:] and ptype not in PURL_TYPES:
        raise UsageError(f"stack token {text!r}: purl type {ptype!r} is not a registered purl type")
    try:
        p = PackageURL.from_string(t)
    except ValueError as exc:
        raise _refuse(text, str(exc).rstrip(".")) from None
    errors = [m.message for m in p.validate() if m.severity == ValidationSeverity.ERROR]
    if errors:
        raise _refuse(text, errors[0])
    quals = p.qualifiers if isinstance(p.qualifiers, dict) else {}
    return Purl(
        type=p.type.lower(),
        namespace=p.namespace.lower() if p.namespace else None,
        name=p.name.lower(),
        version=p.version.lower() if p.version else None,
        qualifiers=tuple(sorted((k.lower(), v.lower()) for k, v in quals.items())),
        subpath=p.subpath.lower() if p.subpath else None,
    )


@functools.lru_cache(maxsize=4096)
def canonical_purl(text: str) -> str:
    """``parse_purl(text).canonical()``, memoized: a resolve re-reads the same few stack purls per credential."""
    return parse_purl(text).canonical()


def grammar_form(purl: str) -> str:
    """A stored purl as written inside ``TASKTYPE[A+B]``: ``+`` percent-encoded, so ``+`` only separates."""
    return purl.replace("+", "%2B")
