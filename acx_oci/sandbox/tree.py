"""Content digests of directory trees and safe writes of task files (host side, stdlib + our JCS).

The digest of a workspace is what a game commits to: the tree the agent left
is hashed before grading, the tree the grader saw is hashed after, and the
two must match or the game is ``invalid``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

from acx_oci import safetree
from acx_oci.crypto.digest import sha256_digest
from acx_oci.crypto.jcs import canonical
from acx_oci.errors import PathOutside, TreeRefused, UsageError

#: Bounds on a tree the host walks (an agent's workspace): past them the tree is refused, not walked on.
MAX_TREE_ENTRIES = 100_000
MAX_TREE_DEPTH = 64
MAX_TREE_BYTES = 2 * 1024 * 1024 * 1024


def _walk_error(exc: OSError) -> None:
    raise TreeRefused(f"tree has a directory the host cannot list ({type(exc).__name__})")


def tree_digest(root: Path) -> str:
    """sha256 over JCS of every entry (path, type, exec bit, content digest or link target); no links followed.

    Raises :class:`TreeRefused` past :data:`MAX_TREE_ENTRIES`, :data:`MAX_TREE_DEPTH` or :data:`MAX_TREE_BYTES`,
    or for a name or link target that is not UTF-8 (checked before descending, so a hostile tree is not walked).
    """
    entries: list[dict[str, str]] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root, onerror=_walk_error, followlinks=False):
        dirnames.sort()
        base = Path(dirpath)
        if len(base.relative_to(root).parts) >= MAX_TREE_DEPTH and dirnames:
            raise TreeRefused(f"tree is deeper than {MAX_TREE_DEPTH} directories")
        if len(entries) + len(dirnames) + len(filenames) > MAX_TREE_ENTRIES:
            raise TreeRefused(f"tree has more than {MAX_TREE_ENTRIES} entries")
        for name in sorted(dirnames + filenames):
            p = base / name
            rel = p.relative_to(root).as_posix()
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:
                raise TreeRefused("tree has a file name that is not UTF-8") from None
            st = os.lstat(p)
            total += st.st_size
            if total > MAX_TREE_BYTES:
                raise TreeRefused(f"tree holds more than {MAX_TREE_BYTES} bytes")
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(p)
                try:
                    target.encode("utf-8")
                except UnicodeEncodeError:
                    raise TreeRefused("tree has a link target that is not UTF-8") from None
                entries.append({"path": rel, "type": "symlink", "target": target})
            elif stat.S_ISDIR(st.st_mode):
                entries.append({"path": rel, "type": "dir"})
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(p, "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        h.update(chunk)
                entries.append({"path": rel, "type": "file", "exec": "1" if st.st_mode & 0o111 else "0",
                                "sha256": h.hexdigest()})
            else:
                entries.append({"path": rel, "type": "other"})
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
