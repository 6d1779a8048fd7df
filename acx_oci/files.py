"""Reading documents from local files, bounded, with one-line errors.

The only module (besides key files and stores) that opens user-named files
for reading: a missing file, a directory or an oversize file is a
:class:`UsageError` naming it, never a traceback.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from acx_oci import safetree
from acx_oci.errors import PathOutside, UsageError
from acx_oci.jsonio import MAX_DOCUMENT_BYTES, parse_json, parse_yaml


def read_bytes(path: str | Path, what: str, max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes:
    """At most ``max_bytes`` of a user-named file; a missing file, a directory or an oversize file is one UsageError."""
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
    """A bounded JSON file parsed; errors name ``what`` and the path."""
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


#: Bounds on a suite, exam or cartridge directory read with :func:`read_text_tree`.
MAX_TREE_FILE_BYTES = 16 * 1024 * 1024
MAX_TREE_FILES = 20_000


def _inside_dir(root: Path, rel: str, what: str) -> int | None:
    """A descriptor of ``root/rel`` reached through real directories inside ``root``.

    ``None`` when it is absent or a file (there is no such tree); a symlink anywhere on the way is refused.
    """
    parts = safetree.parts_of(rel, what)
    fd = safetree.open_root(root)
    try:
        with safetree.dir_at(fd, parts[:-1], what=what) as parent:
            if parent is None or not parts:
                return None if parent is None else os.dup(parent)
            st = safetree.lstat_at(parent, parts[-1])
            if st is not None and stat.S_ISLNK(st.st_mode):
                raise PathOutside(f"{what} {rel!r} is a symlink; only directories inside are read")
            if st is None or not stat.S_ISDIR(st.st_mode):
                return None
            return safetree.open_dir(parent, parts[-1:], what=what)
    finally:
        os.close(fd)


def read_file_tree(root: Path, rel: str, what: str, *, max_bytes: int = MAX_TREE_FILE_BYTES,
                   max_files: int = MAX_TREE_FILES, skip_pycache: bool = True) -> dict[str, bytes]:
    """``{path: bytes}`` of every regular file under ``root/rel``; ``{}`` when there is no such directory.

    ``rel`` must stay inside ``root`` (no absolute name, no ``..``, no symlink on the way), and so must
    everything below it: a symlink or a special file is refused (:class:`PathOutside`, exit 2, naming it),
    never followed, so a suite or a cartridge can publish only bytes that are really in it.
    """
    try:
        fd = _inside_dir(root, rel, what)
    except PathOutside as exc:
        raise PathOutside(f"{exc} (in {root})") from None
    if fd is None:
        return {}
    out: dict[str, bytes] = {}
    try:
        for entry in safetree.walk(fd, max_entries=max_files, what=f"{what} ({root / rel})"):
            if skip_pycache and "__pycache__" in entry.rel.split("/"):
                continue
            shown = root / rel / entry.rel
            if entry.is_link:
                raise PathOutside(f"{what}: {shown} is a symlink; only regular files inside the directory are read")
            if entry.is_dir:
                continue
            if not entry.is_file:
                raise PathOutside(f"{what}: {shown} is not a regular file")
            out[entry.rel] = safetree.read_file_at(entry.parent_fd, entry.name, max_bytes, f"{what}: {shown}")
    finally:
        os.close(fd)
    return out


def read_text_tree(root: Path, rel: str, what: str, *, max_bytes: int = MAX_TREE_FILE_BYTES) -> dict[str, str]:
    """:func:`read_file_tree` as UTF-8 text (``__pycache__`` skipped); a file that is not UTF-8 is an error."""
    out: dict[str, str] = {}
    for name, data in read_file_tree(root, rel, what, max_bytes=max_bytes).items():
        try:
            out[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{what}: {root / rel / name} is not UTF-8 text") from None
    return out


def read_bytes_inside(root: Path, rel: str, what: str, max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes | None:
    """A file ``root/rel`` read without following any link (``None`` when it does not exist).

    A symlink, a special file or a name leaving ``root`` is :class:`PathOutside` (exit 2, naming it).
    """
    parts = safetree.parts_of(rel, what)
    if not parts:
        raise PathOutside(f"{what} {rel!r} names a directory, not a file")
    try:
        pfd = _inside_dir(root, "/".join(parts[:-1]), what)
    except PathOutside as exc:
        raise PathOutside(f"{exc} (in {root})") from None
    if pfd is None:
        return None
    try:
        if safetree.lstat_at(pfd, parts[-1]) is None:
            return None
        return safetree.read_file_at(pfd, parts[-1], max_bytes, f"{what} ({root / rel})")
    finally:
        os.close(pfd)


def load_yaml_or_json_inside(root: Path, rel: str, what: str) -> Any:
    """:func:`load_yaml_or_json_file` for a file that must be inside ``root``; ``None`` when it is absent."""
    raw = read_bytes_inside(root, rel, what)
    if raw is None:
        return None
    if rel.endswith(".json"):
        return parse_json(raw, f"{what} ({root / rel})")
    return parse_yaml(raw, f"{what} ({root / rel})")


def read_bytes_in(root: Path, rel: str, what: str, max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes:
    """:func:`read_bytes_inside` for a file that must exist (one line naming it otherwise)."""
    raw = read_bytes_inside(root, rel, what, max_bytes)
    if raw is None:
        raise UsageError(f"{what}: file not found: {root / rel}")
    return raw
