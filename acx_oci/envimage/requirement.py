"""The one door for requirement strings from outside: parsed once, by a strict grammar, re-serialised by us.

Every requirement that comes from outside — a repository's ``pyproject.toml``/``setup.py``/``setup.cfg``/
requirements/``tox.ini`` files (also at a SWE-bench instance's base commit), a user's ``--requirements`` file,
an ``env.json`` spec, an sdist's ``[build-system] requires`` — passes :func:`admit` before anything reads it.
The rule is PEP 508 as :class:`packaging.requirements.Requirement` reads it, narrowed to data: printable ASCII
only (a Unicode line separator would split pip's and uv's line-based files into a second line of the
attacker's choosing), a name, extras, a version specifier and a marker; no URL (``name @ …``), no path, no
option (``-e``, ``--index-url``), no comment or continuation, nothing after. What passes is written out again
from the parsed parts (:func:`admit`'s return) and checked to read back the same, so no original text ever
reaches a requirements file. What fails is dropped and named by :func:`sort_out` (an import goes on without
it); a spec that holds such a line is refused whole (:func:`admit` raises).

A wheel's own ``Requires-Dist`` is read only by the resolver (uv, :mod:`acx_oci.envimage.lock`), which never
builds and refuses a URL dependency that a requirement did not name itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from acx_oci.errors import UsageError

#: Characters of one requirement: a longer one is no dependency anyone declares.
MAX_REQUIREMENT = 1024
_PRINTABLE = re.compile(r"^[\x20-\x7e]*$")
#: ASCII a requirement never needs and a line-based file reads as syntax: a comment, a continuation, and an
#: option after a space (inside a marker's quotes too: pip splits a line at " -", uv at " --", quotes unseen).
_SYNTAX = re.compile(r"[#\\]|\s-")


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them (``More_Itertools`` is ``more-itertools``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def shown(text: str) -> str:
    """``text`` as one printable ASCII line for a message or a ``dropped`` list (anything else escaped, cut)."""
    out = text.encode("ascii", "backslashreplace").decode("ascii")
    out = "".join(c if " " <= c <= "~" else f"\\x{ord(c):02x}" for c in out)
    return out if len(out) <= 200 else out[:200] + "..."


def why_not(text: str) -> str | None:
    """Why ``text`` is no requirement we pass on, or None when it is one."""
    req = text.strip(" \t")
    if not req:
        return "empty"
    if len(req) > MAX_REQUIREMENT:
        return f"longer than {MAX_REQUIREMENT} characters"
    if not _PRINTABLE.match(req):
        bad = next(c for c in req if not " " <= c <= "~")
        return f"holds U+{ord(bad):04X}, not printable ASCII"
    if req.startswith("-"):
        return "an option, not a requirement"
    if _SYNTAX.search(req):
        return "holds '#', '\\' or ' -' (a comment, a continuation or an option in a requirements file)"
    try:
        parsed = Requirement(req)
    except InvalidRequirement:
        return "not a requirement (name[extras] specifier; marker)"
    if parsed.url is not None:
        return "a direct URL or path (name @ ...); only index releases are resolved"
    return None


def _serialise(req: Requirement) -> str:
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    marker = f"; {req.marker}" if req.marker is not None else ""
    return f"{req.name}{extras}{req.specifier}{marker}"


def admit(text: str, where: str = "requirement") -> str:
    """``text`` re-serialised from its parsed parts; :class:`UsageError` naming it and why when it fails."""
    why = why_not(text)
    if why is None:
        line = _serialise(Requirement(text.strip(" \t")))
        if why_not(line) is None and _serialise(Requirement(line)) == line:
            return line
        why = "does not read back the same once written out"
    raise UsageError(f"{where}: {shown(text)!r} is not a requirement we pass on ({why})")


def sort_out(lines: Iterable[str]) -> tuple[list[str], list[str]]:
    """(the admitted lines, re-serialised; the others, each shown as ``TEXT (why)``) — an import keeps going."""
    kept: list[str] = []
    dropped: list[str] = []
    for text in lines:
        try:
            kept.append(admit(text))
        except UsageError:
            dropped.append(f"{shown(text.strip(' '))} ({why_not(text) or 'does not read back the same'})")
    return kept, dropped


def name_of(line: str) -> str | None:
    """The normalised distribution name of an admitted requirement, None for anything else."""
    if why_not(line) is not None:
        return None
    return str(canonicalize_name(Requirement(line.strip(" \t")).name))


__all__ = ["MAX_REQUIREMENT", "admit", "name_of", "normalize", "shown", "sort_out", "why_not"]
