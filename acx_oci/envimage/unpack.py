"""Unpack image layers safely into one directory: the rules, and nothing about stores or caches.

Per entry, in layer order (OCI image layer spec, with whiteouts):

* names are taken relative to the root; an absolute name or a ``..`` component is refused;
* no entry is written *through* a symlink: every parent component must be a real directory (a layer that
  writes ``lib/x`` where ``lib`` is a symlink is refused, so no link can redirect a write out of the root);
* a symlink's target is resolved lexically and *rooted*, the way the kernel resolves it inside the sandbox
  (where the unpacked root is ``/``): ``/usr/bin/mawk`` is the image's own file and is allowed; a target
  whose ``..`` components climb above the root (``../../../etc/shadow``, ``/../etc/shadow``) escapes and is
  refused. The unpacker itself never follows a link;
* a hard link must name an existing regular file of the root (no ``..``, not absolute, not through a symlink);
* ``.wh.NAME`` deletes NAME from lower layers, ``.wh..wh..opq`` empties its directory of lower-layer entries;
* device nodes and FIFOs are skipped, set-uid/set-gid bits are stripped (files and directories); both counted;
* owners are kept (numeric) when the unpacker is root; the total of bytes written (and decompressed) and the
  number of entries are bounded.

Any refusal raises :class:`ImageUnsafe` with one line naming the layer and the entry.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import posixpath
import shutil
import stat
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from acx_oci.errors import ImageUnsafe

DEFAULT_MAX_BYTES = 8 * 1024 * 1024 * 1024
DEFAULT_MAX_ENTRIES = 500_000
WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"
CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    max_bytes: int = DEFAULT_MAX_BYTES  # decompressed bytes over all layers
    max_entries: int = DEFAULT_MAX_ENTRIES


@dataclass
class Stats:
    entries: int = 0
    bytes: int = 0
    decompressed: int = 0
    devices_skipped: int = 0
    setid_stripped: int = 0
    whiteouts: int = 0
    examples: dict[str, list[str]] = field(default_factory=lambda: {"devicesSkipped": [], "setidStripped": []})

    def note(self, kind: str, name: str) -> None:
        if len(self.examples[kind]) < 10:
            self.examples[kind].append(name)

    def to_json(self) -> dict[str, Any]:
        return {"entries": self.entries, "bytes": self.bytes, "devicesSkipped": self.devices_skipped,
                "setidStripped": self.setid_stripped, "whiteouts": self.whiteouts, "examples": self.examples}


class _Counted:
    """Reads a decompressed stream, hashing it and refusing more than the byte budget."""

    def __init__(self, src: IO[bytes], stats: Stats, limits: Limits, where: str) -> None:
        self.src, self.stats, self.limits, self.where = src, stats, limits, where
        self.hash = hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        data = self.src.read(n)
        self.hash.update(data)
        self.stats.decompressed += len(data)
        if self.stats.decompressed > self.limits.max_bytes:
            raise ImageUnsafe(f"{self.where}: decompresses past the {self.limits.max_bytes}-byte bound")
        return data

    def drain(self) -> None:
        while self.read(CHUNK):
            pass


def _clean_name(raw: str, where: str) -> str:
    name = raw
    while name.startswith("./"):
        name = name[2:]
    name = name.rstrip("/")
    if raw.startswith("/"):
        raise ImageUnsafe(f"{where}: entry {raw!r} has an absolute path")
    parts = name.split("/")
    if ".." in parts:
        raise ImageUnsafe(f"{where}: entry {raw!r} contains '..'")
    return "/".join(p for p in parts if p not in ("", "."))


def _parent_dir(root: Path, name: str, where: str, *, create: bool) -> Path | None:
    """The real directory that will hold ``name``, created as needed; never through a symlink."""
    cur = root
    for part in name.split("/")[:-1]:
        cur = cur / part
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            if not create:
                return None
            os.mkdir(cur, 0o755)
            continue
        if stat.S_ISLNK(st.st_mode):
            raise ImageUnsafe(f"{where}: entry {name!r} goes through the symlink {part!r}")
        if not stat.S_ISDIR(st.st_mode):
            raise ImageUnsafe(f"{where}: entry {name!r} goes through {part!r}, which is not a directory")
    return cur


def remove_tree(path: Path) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        for dirpath, dirnames, _ in os.walk(path):  # a removed tree may hold read-only directories
            for d in dirnames:
                full = os.path.join(dirpath, d)
                if not os.path.islink(full):  # os.walk lists links to directories too: never follow one
                    with contextlib.suppress(OSError):
                        os.chmod(full, 0o755)
        shutil.rmtree(path)
    else:
        os.unlink(path)


def symlink_escapes(name: str, target: str) -> bool:
    """Whether ``target`` (of the link at ``name``), resolved lexically with the root as ``/``, leaves the root."""
    base = "/" if target.startswith("/") else "/" + posixpath.dirname(name)
    depth = 0 if base == "/" else len([p for p in base.split("/") if p])
    for part in target.split("/"):
        if part in ("", "."):
            continue
        depth = depth - 1 if part == ".." else depth + 1
        if depth < 0:
            return True
    return False


class Unpacker:
    """Applies layers, in order, to ``root``; directory modes and times are applied in :meth:`finish`."""

    def __init__(self, root: Path, limits: Limits | None = None) -> None:
        self.root = root
        self.limits = limits or Limits()
        self.stats = Stats()
        self.dirs: dict[str, tuple[int, int]] = {}  # name -> (mode, mtime)
        self.as_root = os.geteuid() == 0

    def layer(self, fileobj: IO[bytes], *, gzipped: bool, where: str, diff_id: str | None = None) -> None:
        """Apply one layer stream; ``diff_id`` (the config's) is checked against the decompressed bytes."""
        src: IO[bytes] = gzip.GzipFile(fileobj=fileobj, mode="rb") if gzipped else fileobj  # type: ignore[assignment]
        counted = _Counted(src, self.stats, self.limits, where)
        added: set[str] = set()
        try:
            with tarfile.open(fileobj=counted, mode="r|") as tf:  # type: ignore[call-overload]
                for m in tf:
                    self._entry(tf, m, where, added)
            counted.drain()
        except (tarfile.TarError, gzip.BadGzipFile, EOFError, OSError) as exc:
            if isinstance(exc, ImageUnsafe):
                raise
            raise ImageUnsafe(f"{where}: not a readable tar layer ({type(exc).__name__}: {exc})") from None
        if diff_id is not None and "sha256:" + counted.hash.hexdigest() != diff_id:
            raise ImageUnsafe(f"{where}: uncompressed digest sha256:{counted.hash.hexdigest()} is not the "
                              f"config's diff_id {diff_id}")

    def _entry(self, tf: tarfile.TarFile, m: tarfile.TarInfo, where: str, added: set[str]) -> None:
        st = self.stats
        st.entries += 1
        if st.entries > self.limits.max_entries:
            raise ImageUnsafe(f"{where}: more than {self.limits.max_entries} entries")
        name = _clean_name(m.name, where)
        if not name:
            return  # the root itself
        base = posixpath.basename(name)
        if base == OPAQUE:
            st.whiteouts += 1
            parent = _parent_dir(self.root, name, where, create=True)
            assert parent is not None
            for child in os.listdir(parent):
                rel = posixpath.join(posixpath.dirname(name), child)
                if rel not in added:
                    remove_tree(parent / child)
            return
        if base.startswith(WHITEOUT):
            st.whiteouts += 1
            victim = posixpath.join(posixpath.dirname(name), base[len(WHITEOUT):])
            parent = _parent_dir(self.root, victim, where, create=False)
            if parent is not None:
                remove_tree(parent / posixpath.basename(victim))
            self.dirs = {d: v for d, v in self.dirs.items() if d != victim and not d.startswith(victim + "/")}
            return
        if m.ischr() or m.isblk() or m.isfifo():
            st.devices_skipped += 1
            st.note("devicesSkipped", name)
            return
        if not (m.isreg() or m.isdir() or m.issym() or m.islnk()):
            raise ImageUnsafe(f"{where}: entry {name!r} has an unsupported type {m.type!r}")
        parent = _parent_dir(self.root, name, where, create=True)
        assert parent is not None
        path = parent / base
        mode = m.mode & 0o7777
        if mode & (stat.S_ISUID | stat.S_ISGID) and not m.issym():
            st.setid_stripped += 1
            st.note("setidStripped", name)
            mode &= ~(stat.S_ISUID | stat.S_ISGID)
        existing = os.lstat(path) if os.path.lexists(path) else None
        if existing is not None and not (m.isdir() and stat.S_ISDIR(existing.st_mode)):
            remove_tree(path)
        added.add(name)
        if m.isdir():
            if existing is None or not stat.S_ISDIR(existing.st_mode):
                os.mkdir(path, 0o755)
            self.dirs[name] = (mode, int(m.mtime))
            self._own(path, m)
            return
        self.dirs.pop(name, None)
        if m.issym():
            if symlink_escapes(name, m.linkname):
                raise ImageUnsafe(f"{where}: symlink {name!r} -> {m.linkname!r} leads outside the root")
            os.symlink(m.linkname, path)
            self._own(path, m)
            with contextlib.suppress(OSError):
                os.utime(path, (m.mtime, m.mtime), follow_symlinks=False)
            return
        if m.islnk():
            self._hardlink(m, name, path, where)
            return
        self._write(tf, m, path, mode, where)

    def _hardlink(self, m: tarfile.TarInfo, name: str, path: Path, where: str) -> None:
        target = _clean_name(m.linkname, f"{where}: hard link {name!r}")
        tparent = _parent_dir(self.root, target, where, create=False) if target else None
        tpath = tparent / posixpath.basename(target) if tparent is not None else None
        if tpath is None or not os.path.lexists(tpath) or not stat.S_ISREG(os.lstat(tpath).st_mode):
            raise ImageUnsafe(f"{where}: hard link {name!r} -> {m.linkname!r} does not name a regular file "
                              "inside the root")
        os.link(tpath, path, follow_symlinks=False)

    def _write(self, tf: tarfile.TarFile, m: tarfile.TarInfo, path: Path, mode: int, where: str) -> None:
        self.stats.bytes += m.size
        if self.stats.bytes > self.limits.max_bytes:
            raise ImageUnsafe(f"{where}: decompresses past the {self.limits.max_bytes}-byte bound (at {m.name!r})")
        src = tf.extractfile(m)
        assert src is not None
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            while chunk := src.read(CHUNK):
                out.write(chunk)
            if self.as_root:
                os.fchown(out.fileno(), m.uid, m.gid)
            os.fchmod(out.fileno(), mode)
        os.utime(path, (m.mtime, m.mtime), follow_symlinks=False)

    def _own(self, path: Path, m: tarfile.TarInfo) -> None:
        if self.as_root:
            os.lchown(path, m.uid, m.gid)

    def finish(self) -> Stats:
        """Apply directory modes and times deepest first (a 0555 directory is filled before it is closed)."""
        for name in sorted(self.dirs, key=lambda d: d.count("/"), reverse=True):
            mode, mtime = self.dirs[name]
            path = self.root / name
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, mode if self.as_root else mode | 0o700)
                os.utime(path, (mtime, mtime))
        return self.stats
