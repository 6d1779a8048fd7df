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
import os
import posixpath
import stat
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from acx_oci import safetree
from acx_oci.crypto import StreamDigest
from acx_oci.errors import ImageUnsafe, PathOutside

DEFAULT_MAX_BYTES = 8 * 1024 * 1024 * 1024
DEFAULT_MAX_ENTRIES = 500_000
WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"
CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """The bounds an unpack enforces over all layers together, so a small image cannot expand without end."""

    max_bytes: int = DEFAULT_MAX_BYTES  # decompressed bytes over all layers
    max_entries: int = DEFAULT_MAX_ENTRIES


@dataclass
class Stats:
    """What an unpack did and what it refused or changed, reported so a user sees devices skipped and set-id bits
    stripped."""

    entries: int = 0
    bytes: int = 0
    decompressed: int = 0
    devices_skipped: int = 0
    setid_stripped: int = 0
    whiteouts: int = 0
    examples: dict[str, list[str]] = field(default_factory=lambda: {"devicesSkipped": [], "setidStripped": []})

    def note(self, kind: str, name: str) -> None:
        """Keep up to ten example names per kind: enough to show the user, bounded for a hostile image."""
        if len(self.examples[kind]) < 10:
            self.examples[kind].append(name)

    def to_json(self) -> dict[str, Any]:
        """The counts and examples as the unpack report in ``--json`` output."""
        return {"entries": self.entries, "bytes": self.bytes, "devicesSkipped": self.devices_skipped,
                "setidStripped": self.setid_stripped, "whiteouts": self.whiteouts, "examples": self.examples}


class _Counted:
    """Reads a decompressed stream, hashing it and refusing more than the byte budget."""

    def __init__(self, src: IO[bytes], stats: Stats, limits: Limits, where: str) -> None:
        self.src, self.stats, self.limits, self.where = src, stats, limits, where
        self.seen = StreamDigest()

    def read(self, n: int = -1) -> bytes:
        data = self.src.read(n)
        self.seen.update(data)
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
    if raw.startswith("/"):
        raise ImageUnsafe(f"{where}: entry {raw!r} has an absolute path")
    parts = name.rstrip("/").split("/")
    if ".." in parts:
        raise ImageUnsafe(f"{where}: entry {raw!r} contains '..'")
    return "/".join(p for p in parts if p not in ("", "."))


def _parent_fd(root_fd: int, name: str, where: str, *, create: bool) -> int | None:
    """A descriptor of the real directory that will hold ``name``, created as needed; never through a link."""
    try:
        return safetree.open_dir(root_fd, name.split("/")[:-1], create=create, whole=name)
    except PathOutside as exc:
        raise ImageUnsafe(f"{where}: {exc}") from None


def remove_tree(path: Path) -> None:
    """Remove a cache entry or staging tree; nothing in it (links, read-only directories) is followed."""
    safetree.remove_path(path)


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
    """Applies layers, in order, to ``root``; directory modes and times are applied in :meth:`finish`.

    Every write goes through descriptors opened from ``root`` one component at a time (:mod:`acx_oci.safetree`),
    so no entry a layer wrote before — a symlink where a directory was — can redirect a later one.
    """

    def __init__(self, root: Path, limits: Limits | None = None) -> None:
        self.root = root
        self.root_fd = safetree.open_root(root)
        self.limits = limits or Limits()
        self.stats = Stats()
        self.dirs: dict[str, tuple[int, int]] = {}  # name -> (mode, mtime)
        self.as_root = os.geteuid() == 0

    def close(self) -> None:
        """Release the root's descriptor (idempotent)."""
        if self.root_fd >= 0:
            os.close(self.root_fd)
            self.root_fd = -1

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
        if diff_id is not None and counted.seen.digest != diff_id:
            raise ImageUnsafe(f"{where}: uncompressed digest {counted.seen.digest} is not the "
                              f"config's diff_id {diff_id}")

    def _forget_dirs(self, name: str) -> None:
        """``name`` stops being a directory: no pending mode or time under it may be applied later."""
        self.dirs = {d: v for d, v in self.dirs.items() if d != name and not d.startswith(name + "/")}

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
            pfd = _parent_fd(self.root_fd, name, where, create=True)
            assert pfd is not None
            try:
                dirname = posixpath.dirname(name)
                for child in os.listdir(pfd):
                    rel = posixpath.join(dirname, child)
                    if rel not in added:
                        safetree.remove_at(pfd, child)
                        self._forget_dirs(rel)
            finally:
                os.close(pfd)
            return
        if base.startswith(WHITEOUT):
            st.whiteouts += 1
            victim = posixpath.join(posixpath.dirname(name), base[len(WHITEOUT):])
            pfd = _parent_fd(self.root_fd, victim, where, create=False)
            if pfd is not None:
                try:
                    safetree.remove_at(pfd, posixpath.basename(victim))
                finally:
                    os.close(pfd)
            self._forget_dirs(victim)
            return
        if m.ischr() or m.isblk() or m.isfifo():
            st.devices_skipped += 1
            st.note("devicesSkipped", name)
            return
        if not (m.isreg() or m.isdir() or m.issym() or m.islnk()):
            raise ImageUnsafe(f"{where}: entry {name!r} has an unsupported type {m.type!r}")
        pfd = _parent_fd(self.root_fd, name, where, create=True)
        assert pfd is not None
        try:
            self._place(tf, m, name, base, pfd, where, added)
        finally:
            os.close(pfd)

    def _place(self, tf: tarfile.TarFile, m: tarfile.TarInfo, name: str, base: str, pfd: int, where: str,
               added: set[str]) -> None:
        mode = m.mode & 0o7777
        if mode & (stat.S_ISUID | stat.S_ISGID) and not m.issym():
            self.stats.setid_stripped += 1
            self.stats.note("setidStripped", name)
            mode &= ~(stat.S_ISUID | stat.S_ISGID)
        existing = safetree.lstat_at(pfd, base)
        was_dir = existing is not None and stat.S_ISDIR(existing.st_mode)
        if existing is not None and not (m.isdir() and was_dir):
            safetree.remove_at(pfd, base)
        added.add(name)
        if m.isdir():
            if not was_dir:
                os.mkdir(base, 0o755, dir_fd=pfd)
            self.dirs[name] = (mode, int(m.mtime))
            self._own(pfd, base, m)
            return
        self._forget_dirs(name)  # a directory replaced by a file or link takes its pending entries with it
        if m.issym():
            if symlink_escapes(name, m.linkname):
                raise ImageUnsafe(f"{where}: symlink {name!r} -> {m.linkname!r} leads outside the root")
            os.symlink(m.linkname, base, dir_fd=pfd)
            self._own(pfd, base, m)
            with contextlib.suppress(OSError):
                os.utime(base, (m.mtime, m.mtime), dir_fd=pfd, follow_symlinks=False)
            return
        if m.islnk():
            self._hardlink(m, name, base, pfd, where)
            return
        self._write(tf, m, base, pfd, mode, where)

    def _hardlink(self, m: tarfile.TarInfo, name: str, base: str, pfd: int, where: str) -> None:
        target = _clean_name(m.linkname, f"{where}: hard link {name!r}")
        tfd = _parent_fd(self.root_fd, target, where, create=False) if target else None
        refused = ImageUnsafe(f"{where}: hard link {name!r} -> {m.linkname!r} does not name a regular file "
                              "inside the root")
        if tfd is None:
            raise refused
        try:
            tst = safetree.lstat_at(tfd, posixpath.basename(target))
            if tst is None or not stat.S_ISREG(tst.st_mode):
                raise refused
            os.link(posixpath.basename(target), base, src_dir_fd=tfd, dst_dir_fd=pfd, follow_symlinks=False)
        finally:
            os.close(tfd)

    def _write(self, tf: tarfile.TarFile, m: tarfile.TarInfo, base: str, pfd: int, mode: int, where: str) -> None:
        self.stats.bytes += m.size
        if self.stats.bytes > self.limits.max_bytes:
            raise ImageUnsafe(f"{where}: decompresses past the {self.limits.max_bytes}-byte bound (at {m.name!r})")
        src = tf.extractfile(m)
        assert src is not None
        fd = os.open(base, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=pfd)
        with os.fdopen(fd, "wb") as out:
            while chunk := src.read(CHUNK):
                out.write(chunk)
            if self.as_root:
                os.fchown(out.fileno(), m.uid, m.gid)
            os.fchmod(out.fileno(), mode)
            os.utime(out.fileno(), (m.mtime, m.mtime))

    def _own(self, pfd: int, base: str, m: tarfile.TarInfo) -> None:
        if self.as_root:
            os.chown(base, m.uid, m.gid, dir_fd=pfd, follow_symlinks=False)

    def _check_links(self) -> None:
        """No link may lead above the root on the host: a chain of links that each stay inside lexically
        (``a/r0 -> ..``, ``a/r1 -> r0/..``) can, and a host tool resolving a path under the root would follow it.
        Absolute targets are rooted (the sandbox's meaning); host code never follows them."""
        for entry in safetree.walk(self.root_fd, max_entries=self.limits.max_entries, max_depth=256,
                                   what="unpacked root"):
            if entry.is_link:
                try:
                    safetree.resolve(self.root_fd, entry.rel, escape=True)
                except PathOutside:
                    raise ImageUnsafe(f"image: symlink {entry.rel!r} -> "
                                      f"{os.readlink(entry.name, dir_fd=entry.parent_fd)!r} leads outside the "
                                      "root through other links") from None

    def finish(self) -> Stats:
        """Check every link, then apply directory modes and times deepest first (a 0555 directory is filled
        before it is closed), each on the directory opened through real directories only."""
        try:
            self._check_links()
        except PathOutside as exc:
            raise ImageUnsafe(f"image: {exc}") from None
        for name in sorted(self.dirs, key=lambda d: d.count("/"), reverse=True):
            mode, mtime = self.dirs[name]
            try:
                fd = safetree.open_dir(self.root_fd, name.split("/"))
            except PathOutside:
                continue  # no longer a directory reached through directories: never applied through a link
            if fd is None:
                continue
            try:
                os.fchmod(fd, mode if self.as_root else mode | 0o700)
                os.utime(fd, (mtime, mtime))
            finally:
                os.close(fd)
        return self.stats
