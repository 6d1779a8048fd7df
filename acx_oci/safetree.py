"""Trees that came from outside, read and written relative to directory file descriptors.

Why: a path string is resolved by the host's kernel at every use, and a later entry of an image layer (or a
link an author planted in a suite) can turn any of its components into a symlink to a host directory. So
nothing here hands the kernel a multi-component path: every component is opened on its own, from its
parent's descriptor, with ``O_NOFOLLOW``; metadata comes from ``lstat`` semantics; modes and times are
changed on the object that was opened. A symlink inside such a tree is *data*: created as a link, never
followed by host code. Where its meaning matters (does ``/etc/x`` exist inside the image?), it is resolved
against the tree's own root, link by link, with a bound — never by the host's resolver.

Every refusal is a :class:`PathOutside` (exit 2) naming the entry; callers with their own vocabulary
(the image unpacker's :class:`~acx_oci.errors.ImageUnsafe`) re-raise it with their context.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from acx_oci.errors import PathOutside

#: Symlinks followed while resolving one path inside a root (the kernel's own limit is 40).
MAX_LINKS = 40
#: Bounds on a tree walked with :func:`walk`: past them the walk is refused, not continued.
MAX_WALK_ENTRIES = 100_000
MAX_WALK_DEPTH = 64

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def parts_of(rel: str, what: str = "path") -> list[str]:
    """The components of a relative name; an absolute name or a ``..`` component is refused."""
    if rel.startswith("/"):
        raise PathOutside(f"{what} {rel!r} is an absolute path")
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PathOutside(f"{what} {rel!r} contains '..'")
    return parts


def open_root(path: str | Path) -> int:
    """A descriptor of the directory the user (or our own code) named; only its *contents* are untrusted."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise PathOutside(f"directory not found: {path}") from None
    except NotADirectoryError:
        raise PathOutside(f"expected a directory, found a file: {path}") from None
    except OSError as exc:
        raise PathOutside(f"cannot open directory {path}: {exc.strerror}") from None


def _refuse_component(dir_fd: int, part: str, whole: str, what: str) -> PathOutside:
    st = lstat_at(dir_fd, part)
    if st is not None and stat.S_ISLNK(st.st_mode):
        return PathOutside(f"{what} {whole!r} goes through the symlink {part!r}")
    return PathOutside(f"{what} {whole!r} goes through {part!r}, which is not a directory")


def open_dir(dir_fd: int, parts: list[str], *, create: bool = False, what: str = "entry",
             whole: str | None = None) -> int | None:
    """A new descriptor of ``dir_fd/parts...``, every component a real directory (created when ``create``).

    ``None`` when a component is missing and ``create`` is false. A symlink or non-directory on the way is
    refused: the caller asked for a place *inside* the tree, and a link would lead somewhere else.
    """
    whole = whole if whole is not None else "/".join(parts)
    cur = os.dup(dir_fd)
    try:
        for part in parts:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=cur)
            except FileNotFoundError:
                if not create:
                    os.close(cur)
                    return None
                os.mkdir(part, 0o755, dir_fd=cur)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=cur)
                os.fchmod(nxt, 0o755)  # whatever the umask: a sandbox's other uid must traverse it
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refuse_component(cur, part, whole, what) from None
                raise
            os.close(cur)
            cur = nxt
        return cur
    except BaseException:
        os.close(cur)
        raise


@contextlib.contextmanager
def dir_at(dir_fd: int, parts: list[str], *, create: bool = False, what: str = "entry") -> Iterator[int | None]:
    """:func:`open_dir` as a context manager that closes what it opened."""
    fd = open_dir(dir_fd, parts, create=create, what=what)
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    """``lstat`` of one name in a directory, or ``None`` when it does not exist."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def remove_at(dir_fd: int, name: str) -> None:
    """Remove ``name`` (a file, a link or a whole tree) from a directory; nothing below it is followed.

    Iterative, so a tree deeper than Python's recursion limit is removed too; directories are made writable
    first (a read-only directory from an image layer must still be emptied).
    """
    st = lstat_at(dir_fd, name)
    if st is None:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=dir_fd)
        return
    stack: list[tuple[int, str, int]] = []  # (parent fd, name, fd of the directory being emptied)

    def push(parent: int, child: str) -> None:
        fd = os.open(child, _DIR_FLAGS, dir_fd=parent)
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o700)
        stack.append((parent, child, fd))

    push(dir_fd, name)
    try:
        while stack:
            _parent, _name, fd = stack[-1]
            sub = None
            with os.scandir(fd) as it:
                for entry in it:
                    if entry.is_dir(follow_symlinks=False):
                        sub = entry.name
                        break
                    os.unlink(entry.name, dir_fd=fd)
            if sub is not None:
                push(fd, sub)
                continue
            stack.pop()
            os.close(fd)
            os.rmdir(_name, dir_fd=_parent)
    finally:
        for _p, _n, fd in stack:
            os.close(fd)


def remove_path(path: str | Path) -> None:
    """Remove a tree we created (a cache entry, a staging directory) whose contents came from outside."""
    p = Path(path)
    try:
        parent = os.open(p.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        remove_at(parent, p.name)
    finally:
        os.close(parent)


def resolve(root_fd: int, name: str, *, follow_last: bool = True, escape: bool = False) -> str | None:
    """Where ``name`` leads *inside* the tree, as the kernel would resolve it with the tree as ``/``.

    Absolute link targets restart at the tree's root. ``..`` at the root stays there (a chroot's rule), or,
    with ``escape``, raises :class:`PathOutside`: that is how the same link would leave the tree on the
    host. ``None`` when a component does not exist (or a file is used as a directory). At most
    :data:`MAX_LINKS` links are followed.
    """
    pending = deque(p for p in name.split("/") if p not in ("", "."))
    fds: list[int] = []  # fds[i] is the directory stack[i]; the root is root_fd
    stack: list[str] = []
    links = 0
    try:
        while pending:
            part = pending.popleft()
            if part in ("", "."):
                continue
            if part == "..":
                if not stack:
                    if escape:
                        raise PathOutside(f"{name!r} leads above the root through its links")
                    continue
                stack.pop()
                os.close(fds.pop())
                continue
            cur = fds[-1] if fds else root_fd
            st = lstat_at(cur, part)
            if st is None:
                return None
            last = not any(p not in ("", ".") for p in pending)
            if stat.S_ISLNK(st.st_mode) and (follow_last or not last):
                links += 1
                if links > MAX_LINKS:
                    raise PathOutside(f"{name!r}: more than {MAX_LINKS} symlinks on the way")
                target = os.readlink(part, dir_fd=cur)
                if target.startswith("/"):
                    for fd in fds:
                        os.close(fd)
                    fds, stack = [], []
                pending.extendleft(reversed(target.split("/")))
                continue
            if last:
                stack.append(part)
                break
            if not stat.S_ISDIR(st.st_mode):
                return None
            fds.append(os.open(part, _DIR_FLAGS, dir_fd=cur))
            stack.append(part)
        return "/".join(stack)
    finally:
        for fd in fds:
            os.close(fd)


def exists_inside(root: Path, name: str) -> bool:
    """Whether the tree at ``root`` holds an entry at ``name`` as the sandbox sees it (links resolved inside)."""
    fd = open_root(root)
    try:
        return resolve(fd, name, follow_last=False) is not None
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Entry:
    """One entry met by :func:`walk`: its name relative to the root, its ``lstat``, its parent's descriptor."""

    rel: str
    st: os.stat_result
    parent_fd: int
    name: str

    @property
    def is_dir(self) -> bool:
        """A real directory (never a link to one)."""
        return stat.S_ISDIR(self.st.st_mode)

    @property
    def is_link(self) -> bool:
        """A symlink: data, never followed."""
        return stat.S_ISLNK(self.st.st_mode)

    @property
    def is_file(self) -> bool:
        """A regular file."""
        return stat.S_ISREG(self.st.st_mode)


def walk(root_fd: int, *, max_entries: int = MAX_WALK_ENTRIES, max_depth: int = MAX_WALK_DEPTH,
         what: str = "tree") -> Iterator[Entry]:
    """Every entry below ``root_fd`` in sorted order, parents first; links are yielded, never entered.

    A parent's descriptor is valid only until the next entry is requested.
    """
    count = 0
    stack: list[tuple[str, ...]] = [()]
    while stack:
        parts = stack.pop()
        fd = open_dir(root_fd, list(parts), what=what) if parts else os.dup(root_fd)
        if fd is None:
            continue  # removed while we walked: nothing to yield
        try:
            names = sorted(os.listdir(fd))
            count += len(names)
            if count > max_entries:
                raise PathOutside(f"{what} has more than {max_entries} entries")
            subdirs: list[tuple[str, ...]] = []
            for n in names:
                st = lstat_at(fd, n)
                if st is None:
                    continue
                rel = "/".join((*parts, n))
                yield Entry(rel, st, fd, n)
                if stat.S_ISDIR(st.st_mode):
                    if len(parts) + 1 >= max_depth:
                        raise PathOutside(f"{what} is deeper than {max_depth} directories (at {rel!r})")
                    subdirs.append((*parts, n))
            stack.extend(reversed(subdirs))
        finally:
            os.close(fd)


def open_file_at(dir_fd: int, name: str, what: str) -> int:
    """A read descriptor of a regular file in a directory, opened without following a link (no FIFO wait)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathOutside(f"{what} is a symlink; only files inside the directory are read") from None
        raise PathOutside(f"{what}: cannot read ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise PathOutside(f"{what} is not a regular file")
    return fd


def read_file_at(dir_fd: int, name: str, max_bytes: int, what: str) -> bytes:
    """The bytes of a regular file in a directory, opened without following a link, bounded."""
    with os.fdopen(open_file_at(dir_fd, name, what), "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise PathOutside(f"{what} is larger than {max_bytes} bytes")
    return data


def read_inside(root: Path, rel: str, max_bytes: int, what: str) -> bytes:
    """A file named relative to ``root``, every component inside it (no link, no ``..``, not absolute)."""
    parts = parts_of(rel, what)
    if not parts:
        raise PathOutside(f"{what} {rel!r} names the directory itself")
    fd = open_root(root)
    try:
        with dir_at(fd, parts[:-1], what=what) as parent:
            if parent is None:
                raise PathOutside(f"{what} {rel!r}: not found in {root}")
            return read_file_at(parent, parts[-1], max_bytes, f"{what} {rel!r}")
    finally:
        os.close(fd)


def write_inside(root: Path, rel: str, data: bytes, mode: int = 0o644) -> None:
    """Create a new file ``rel`` under ``root`` (parents made as needed); a link or an existing entry refused."""
    parts = parts_of(rel, "file")
    if not parts:
        raise PathOutside(f"file {rel!r} names the directory itself")
    fd = open_root(root)
    try:
        with dir_at(fd, parts[:-1], create=True, what="file") as parent:
            assert parent is not None
            try:
                out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                              0o600, dir_fd=parent)
            except FileExistsError:
                raise PathOutside(f"file {rel!r} is written twice") from None
            with os.fdopen(out, "wb") as fh:
                fh.write(data)
                os.fchmod(fh.fileno(), mode)
    finally:
        os.close(fd)
