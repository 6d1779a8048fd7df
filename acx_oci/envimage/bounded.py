"""Configuration files from outside (a repository's or an sdist's ``pyproject.toml``), read within bounds.

``tomllib`` parses nested arrays and tables by recursion: a file a few thousand ``[`` deep ended an import as
"internal error: RecursionError". :func:`read_toml` measures the nesting first (outside strings and comments)
and refuses more than :data:`MAX_DEPTH` levels or :data:`MAX_TOML_BYTES`, as one line naming the file.
"""

from __future__ import annotations

import tomllib
from typing import Any

from acx_oci.errors import UsageError

MAX_TOML_BYTES = 1024 * 1024
#: Levels of arrays and inline tables; real files use a handful.
MAX_DEPTH = 64


def toml_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in ``text`` outside strings and comments (an over-estimate is fine)."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            j = i + len(quote)
            while j < n and not text.startswith(quote, j):
                if c == '"' and text[j] == "\\":
                    j += 1
                elif len(quote) == 1 and text[j] == "\n":
                    break
                j += 1
            i = j + len(quote)
            continue
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return deepest


def read_toml(text: str, what: str) -> dict[str, Any]:
    """``text`` as TOML; :class:`UsageError` (one line naming ``what``) when too big, too deep or not TOML."""
    if len(text) > MAX_TOML_BYTES:
        raise UsageError(f"{what}: over {MAX_TOML_BYTES} bytes; not read")
    if (depth := toml_depth(text)) > MAX_DEPTH:
        raise UsageError(f"{what}: nested {depth} levels deep (at most {MAX_DEPTH}); not read")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{what}: not TOML ({exc})") from None
    except (RecursionError, MemoryError):
        raise UsageError(f"{what}: nested too deeply to read") from None


__all__ = ["MAX_DEPTH", "read_toml", "toml_depth"]
