"""Reading documents from local files, bounded, with one-line errors.

The only module (besides key files and stores) that opens user-named files
for reading: a missing file, a directory or an oversize file is a
:class:`UsageError` naming it, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from acx_oci.errors import UsageError
from acx_oci.jsonio import MAX_DOCUMENT_BYTES, parse_json


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


_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
VERSION_KEYS = frozenset({"version", "benchmarkVersion", "minVersion"})


class VersionLoader(yaml.SafeLoader):
    """``safe_load``, except that a plain number under a version key stays the text written.

    YAML 1.1 reads ``version: 1.10`` as the float 1.1 (and ``2026.10`` as 2026.1): a version is a name, not a
    quantity, so ``1.10`` stays ``"1.10"`` and ``1`` stays ``"1"``; everything else is read as YAML says.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        for key, value in node.value:
            if (isinstance(key, yaml.ScalarNode) and key.value in VERSION_KEYS
                    and isinstance(value, yaml.ScalarNode) and value.tag in _NUMBER_TAGS and value.style is None):
                value.tag = "tag:yaml.org,2002:str"
        return super().construct_mapping(node, deep)


def load_yaml(raw: bytes | str) -> Any:
    """YAML as :class:`VersionLoader` reads it (raises ``yaml.YAMLError``)."""
    return yaml.load(raw, Loader=VersionLoader)  # a SafeLoader subclass: no arbitrary objects


def load_yaml_or_json_file(path: str | Path, what: str) -> Any:
    """YAML is a superset of JSON, but JSON files get the stricter JSON parser."""
    raw = read_bytes(path, what)
    if str(path).endswith(".json"):
        return parse_json(raw, f"{what} ({path})")
    try:
        return load_yaml(raw)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "syntax error"
        raise UsageError(f"{what} ({path}): expected YAML, found malformed input ({first})") from None
