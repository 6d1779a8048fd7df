"""Content digests of directory trees and safe writes of task files (host side, stdlib + our JCS).

The digest of a workspace is what a game commits to: the tree the agent left
is hashed before grading, the tree the grader saw is hashed after, and the
two must match or the game is ``invalid``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from acx_oci.crypto.digest import sha256_digest
from acx_oci.crypto.jcs import canonical
from acx_oci.errors import UsageError


def tree_digest(root: Path) -> str:
    """sha256 over JCS of every entry (path, type, exec bit, content digest or link target); no links followed."""
    entries: list[dict[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted(dirnames + filenames):
            p = base / name
            rel = p.relative_to(root).as_posix()
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                entries.append({"path": rel, "type": "symlink", "target": os.readlink(p)})
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
    """Write a task's ``{relative path: text}`` under ``root``; a path that leaves ``root`` is refused."""
    for rel, content in files.items():
        p = (root / rel).resolve()
        if root.resolve() not in p.parents:
            raise UsageError(f"task file {rel!r} leaves its directory")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content, "utf-8")
