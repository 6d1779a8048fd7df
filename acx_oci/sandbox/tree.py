"""Content digests of directory trees and safe writes of task files (host side, stdlib + our JCS).

The digest of a workspace is what a game commits to: the tree the agent left
is hashed before grading, the tree the grader saw is hashed after, and the
two must match or the game is ``invalid``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from acx_oci import safetree
from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import PathOutside, TreeRefused, UsageError

#: Bounds on a tree the host walks (an agent's workspace): past them the tree is refused, not walked on.
MAX_TREE_ENTRIES = 100_000
MAX_TREE_DEPTH = 64
MAX_TREE_BYTES = 2 * 1024 * 1024 * 1024


def tree_digest(root: Path) -> str:
    """sha256 over JCS of every entry (path, type, exec bit, content digest or link target); no links followed.

    Walked through directory descriptors (:func:`acx_oci.safetree.walk`): a host limit such as the length of
    a joined path (``ENAMETOOLONG`` from 240-character names nested deep) never becomes an error the agent
    can cause. Raises :class:`TreeRefused` past :data:`MAX_TREE_ENTRIES`, :data:`MAX_TREE_DEPTH` or
    :data:`MAX_TREE_BYTES`, for a name or link target that is not UTF-8, or for a directory the host cannot
    list (checked before descending, so a hostile tree is not walked on).
    """
    entries: list[dict[str, str]] = []
    total = 0
    try:
        fd = safetree.open_root(root)
    except PathOutside as exc:
        raise TreeRefused(f"tree cannot be opened ({exc})") from None
    try:
        for e in safetree.walk(fd, max_entries=MAX_TREE_ENTRIES, max_depth=MAX_TREE_DEPTH, what="tree"):
            try:
                e.rel.encode("utf-8")
            except UnicodeEncodeError:
                raise TreeRefused("tree has a file name that is not UTF-8") from None
            total += e.st.st_size
            if total > MAX_TREE_BYTES:
                raise TreeRefused(f"tree holds more than {MAX_TREE_BYTES} bytes")
            if e.is_link:
                target = os.readlink(e.name, dir_fd=e.parent_fd)
                try:
                    target.encode("utf-8")
                except UnicodeEncodeError:
                    raise TreeRefused("tree has a link target that is not UTF-8") from None
                entries.append({"path": e.rel, "type": "symlink", "target": target})
            elif e.is_dir:
                entries.append({"path": e.rel, "type": "dir"})
            elif e.is_file:
                h = hashlib.sha256()
                with os.fdopen(safetree.open_file_at(e.parent_fd, e.name, e.rel), "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        h.update(chunk)
                entries.append({"path": e.rel, "type": "file", "exec": "1" if e.st.st_mode & 0o111 else "0",
                                "sha256": h.hexdigest()})
            else:
                entries.append({"path": e.rel, "type": "other"})
    except PathOutside as exc:
        raise TreeRefused(str(exc)) from None
    except OSError as exc:
        raise TreeRefused(f"tree has an entry the host cannot read ({type(exc).__name__})") from None
    finally:
        os.close(fd)
    entries.sort(key=lambda e: e["path"])
    return sha256_digest(canonical(entries))


def write_files(root: Path, files: dict[str, str]) -> None:
    """Write a task's ``{relative path: text}`` under ``root``; a path that leaves ``root`` is refused.

    Through :func:`acx_oci.safetree.write_inside`: no component is followed if it is a link, so a task
    (written by a benchmark author) can never place a file outside the workspace.
    """
    for rel, content in files.items():
        try:
            safetree.write_inside(root, rel, content.encode("utf-8"))
        except PathOutside as exc:
            raise UsageError(f"task file {rel!r} leaves its directory ({exc})") from None


def remove_tree(path: Path) -> None:
    """Remove a tree an agent wrote, errors ignored; ``shutil.rmtree`` recurses per directory, so a tree deeper
    than Python's recursion limit goes to ``rm -rf`` (fts: iterative) instead of raising ``RecursionError``."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
