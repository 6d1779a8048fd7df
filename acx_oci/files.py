"""Reading documents from local files, bounded, with one-line errors.

The only module (besides key files and stores) that opens user-named files
for reading: a missing file, a directory or an oversize file is a
:class:`UsageError` naming it, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acx_oci.errors import UsageError
from acx_oci.jsonio import MAX_DOCUMENT_BYTES, parse_json, parse_yaml


def read_bytes(path: str | Path, what: str, max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes:
    p = Path(path)
    try:
        with p.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise UsageError(f"{what}: file not found: {p}") from None
    except IsADirectoryError:
        raise UsageError(f"{what}: expected a file, found a directory: {p}") from None
    except OSError as exc:
        raise UsageError(f"{what}: cannot read {p}: {exc.strerror}") from None
    if len(data) > max_bytes:
        raise UsageError(f"{what}: {p} is larger than {max_bytes} bytes")
    return data


def load_json_file(path: str | Path, what: str) -> Any:
    return parse_json(read_bytes(path, what), f"{what} ({path})")


def load_yaml(raw: bytes | str, what: str = "YAML document") -> Any:
    """YAML as :func:`acx_oci.jsonio.parse_yaml` reads it (bounded; version numbers stay text)."""
    return parse_yaml(raw, what)


def load_yaml_or_json_file(path: str | Path, what: str) -> Any:
    """YAML is a superset of JSON, but JSON files get the stricter JSON parser."""
    raw = read_bytes(path, what)
    if str(path).endswith(".json"):
        return parse_json(raw, f"{what} ({path})")
    return parse_yaml(raw, f"{what} ({path})")
