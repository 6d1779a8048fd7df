"""Build and run one bubblewrap sandbox: the only way the verifier runs code it did not write.

Layering, outermost first (every step is an ``exec``, so the pid we hold is bwrap's)::

    prlimit --cpu --as --nproc --fsize --nofile -- [setpriv --reuid --regid --clear-groups] bwrap ... -- argv

* Rlimits are set with util-linux ``prlimit`` rather than ``preexec_fn``: the gateway runs the verifier in
  threads, and ``preexec_fn`` is unsafe after ``fork`` in a threaded process. Limits survive ``exec`` and
  every fork inside. ``RLIMIT_NPROC`` counts processes per *real host uid*, so it is only meaningful when
  that uid is dedicated to sandboxes (``host_uid``); concurrent sandboxes sharing it share the budget.
* A root verifier drops to ``host_uid``/``host_gid`` with ``setpriv`` before bwrap, so the sandbox holds no
  privilege outside its user namespace either; :func:`acx_oci.sandbox.uids.own_uid` gives each grade, game
  and proof a host uid of its own, so ``RLIMIT_NPROC`` is per run. An unprivileged verifier runs bwrap as itself.
* Inside, the process runs as :data:`INSIDE_UID` (10000; 10001 if that happens to be the host uid), which is
  neither 0 nor the verifier's uid, with every namespace unshared, no capabilities and no nested user
  namespaces.
* Wall clock: bwrap starts in its own session; on timeout its process group gets SIGKILL. bwrap's pid-1
  reaper inside is started with ``--die-with-parent``, and when a pid namespace's init dies the kernel kills
  every process in it, so nothing the agent forked survives.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import selectors
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import IO, Literal

from acx_oci.errors import Abandoned, SandboxError, SandboxUnavailable
from acx_oci.sandbox.capture import Capture

INSIDE_UID = 10000
NOBODY = 65534
#: Host /etc entries a dynamically linked python needs; nothing secret (no passwd, shadow, ssh, ssl keys).
ETC_ALLOW = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "python3", "python3.11",
             "nsswitch.conf", "mime.types")
_SYSTEM_LINKS = ("bin", "lib", "lib64", "lib32", "libx32", "sbin")


def _freeze(env: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(env))


@dataclass(frozen=True)
class SandboxSpec:
    """Everything that decides what a sandboxed process can see and use; games and probes share one spec.

    ``rootfs`` (an unpacked root file system, bound read-only as ``/``) replaces the host system root; it is
    kept for environment images. Binds are ``(host path, path inside)`` pairs. ``disk_mib`` sizes the tmpfs
    ``/tmp``; the rw workspace itself is bounded only by ``file_size_mib`` per file and the host's disk.
    """

    rootfs: Path | None = None
    ro_binds: tuple[tuple[Path, str], ...] = ()
    rw_binds: tuple[tuple[Path, str], ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: _freeze({"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
                                                                    "HOME": "/tmp"}), hash=False)
    chdir: str = "/"
    time_seconds: float = 60.0
    memory_mib: int = 2048
    pids: int = 256
    disk_mib: int = 256
    open_files: int = 256
    file_size_mib: int = 64
    network: Literal["none"] = "none"
    host_uid: int = NOBODY
    host_gid: int = NOBODY
    bwrap: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "env", _freeze(self.env))
        if self.network != "none":
            raise SandboxError(f"sandbox: network {self.network!r} is not supported (only 'none')")
        if not (math.isfinite(self.time_seconds) and self.time_seconds > 0):
            raise SandboxError("sandbox: time_seconds must be a positive number")
        for name in ("memory_mib", "pids", "disk_mib", "open_files", "file_size_mib"):
            if int(getattr(self, name)) < 1:
                raise SandboxError(f"sandbox: {name} must be at least 1")
        for _, inside in (*self.ro_binds, *self.rw_binds):
            if not inside.startswith("/") or ".." in inside.split("/"):
                raise SandboxError(f"sandbox: bind destination {inside!r} must be an absolute path without '..'")


@dataclass(frozen=True)
class SandboxResult:
    """What came back; stdout/stderr keep their head and tail (:class:`~acx_oci.sandbox.capture.Capture`)."""

    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    wall_seconds: float
    # Sampled only when the wall clock killed the run (the harness review's starvation rule reads them): CPU
    # seconds (user + system, reaped children included) and seconds spent runnable but waiting for a CPU.
    cpu_seconds: float | None = None
    runqueue_seconds: float | None = None


def find_bwrap(spec: SandboxSpec | None = None) -> str:
    """The bwrap executable (the spec's, or the first on PATH); a missing one is :class:`SandboxUnavailable`."""
    path = spec.bwrap if spec is not None and spec.bwrap else shutil.which("bwrap")
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise SandboxUnavailable(f"bubblewrap not found ({path or 'bwrap not on PATH'}); install Debian 'bubblewrap'")
    return path


def bwrap_version(spec: SandboxSpec | None = None) -> str:
    """``bwrap --version`` (e.g. ``bubblewrap 0.8.0``); raises :class:`SandboxUnavailable` if it cannot run."""
    exe = find_bwrap(spec)
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"bubblewrap at {exe} does not run: {type(exc).__name__}") from exc
    text = out.stdout.decode("utf-8", "replace").strip()
    if out.returncode != 0 or not text:
        raise SandboxUnavailable(f"bubblewrap at {exe} does not run (exit {out.returncode})")
    return text.splitlines()[0][:100]


def inside_uid(host_uid: int | None = None) -> int:
    """The uid inside the sandbox: :data:`INSIDE_UID`, never 0 and never equal to the verifier's uid."""
    me = os.getuid() if host_uid is None else host_uid
    return INSIDE_UID if me != INSIDE_UID else INSIDE_UID + 1


def drops_privilege() -> bool:
    """True when the verifier is root and so switches to the spec's unprivileged host uid first."""
    return os.geteuid() == 0


def _reachable(path: Path, uid: int, gid: int, *, write: bool) -> bool:
    """Whether uid/gid (no supplementary groups) can traverse to ``path`` and read (or write) it."""
    def allowed(st: os.stat_result, bits: int) -> bool:
        if st.st_uid == uid:
            return bool(st.st_mode & (bits << 6))
        if st.st_gid == gid:
            return bool(st.st_mode & (bits << 3))
        return bool(st.st_mode & bits)

    p = path.resolve()
    try:
        for anc in reversed(p.parents):
            if not allowed(os.stat(anc), 1):
                return False
        st = os.stat(p)
    except OSError:
        return False
    need = 2 if write else 4
    if stat.S_ISDIR(st.st_mode):
        need |= 1
    return all(allowed(st, b) for b in (1, 2, 4) if need & b)


def give_to_sandbox(path: Path, spec: SandboxSpec) -> None:
    """Make a rw bind source (the workspace, an output dir) owned by the sandbox's host uid; nothing else.

    A no-op unless the verifier is root: an unprivileged verifier's sandbox already writes as itself.
    """
    if not drops_privilege():
        return
    os.lchown(path, spec.host_uid, spec.host_gid)
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), spec.host_uid, spec.host_gid)


def staging_dir(prefix: str = "acx-sbx-", parent: Path | None = None) -> Path:
    """A fresh temp dir the sandbox's host uid can traverse and read (0755), for read-only bind sources."""
    d = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    d.chmod(0o755)
    return d


def _system_root() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in _SYSTEM_LINKS:
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    args += ["--dir", "/etc"]
    for name in ETC_ALLOW:
        host = Path("/etc") / name
        if host.exists():
            args += ["--ro-bind", str(host), f"/etc/{name}"]
    return args


def _image_root(rootfs: Path) -> list[str]:
    """An unpacked image as ``/``: each top-level entry bound read-only (symlinks recreated) on bwrap's own root.

    Binding the entries rather than the directory itself leaves bwrap's root free for the mount points it
    creates (``/proc``, ``/dev``, ``/tmp``, ``/rom``, ``/workspace``, ...), so the image needs none of them and
    nothing is ever created inside it. The image's ``/proc``, ``/dev`` and ``/tmp`` are replaced, never bound.
    """
    args: list[str] = []
    try:
        names = sorted(os.listdir(rootfs))
    except OSError as exc:
        raise SandboxError(f"sandbox: rootfs {rootfs} cannot be listed ({exc.strerror})") from None
    for name in names:
        if name in ("proc", "dev", "tmp"):
            continue
        host = rootfs / name
        st = os.lstat(host)
        if stat.S_ISLNK(st.st_mode):
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
            args += ["--ro-bind", str(host), f"/{name}"]
    return args


def build_argv(spec: SandboxSpec, argv: Sequence[str], *, passwd_fd: int | None = None,
               group_fd: int | None = None, info_fd: int | None = None) -> list[str]:
    """The full command line (prlimit, optional setpriv, bwrap, argv). Pure apart from reading host paths."""
    if not argv:
        raise SandboxError("sandbox: empty command")
    exe = find_bwrap(spec)
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        raise SandboxUnavailable("prlimit (util-linux) not found: rlimits cannot be applied")
    cpu = math.ceil(spec.time_seconds) + 1
    mib = 1024 * 1024
    out = [prlimit, f"--cpu={cpu}:{cpu + 1}", f"--as={spec.memory_mib * mib}", f"--nproc={spec.pids}",
           f"--fsize={spec.file_size_mib * mib}", f"--nofile={spec.open_files}", "--"]
    if drops_privilege():
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            raise SandboxUnavailable("setpriv (util-linux) not found: a root verifier cannot drop privilege")
        out += [setpriv, f"--reuid={spec.host_uid}", f"--regid={spec.host_gid}", "--clear-groups"]
    uid = inside_uid(spec.host_uid if drops_privilege() else None)
    out += [exe, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL", "--uid", str(uid), "--gid", str(uid), "--hostname", "sandbox"]
    if info_fd is not None:
        out += ["--info-fd", str(info_fd)]
    if spec.rootfs is not None:
        out += _image_root(spec.rootfs)
    else:
        out += _system_root()
    if passwd_fd is not None and group_fd is not None:
        out += ["--ro-bind-data", str(passwd_fd), "/etc/passwd", "--ro-bind-data", str(group_fd), "/etc/group"]
    out += ["--proc", "/proc", "--dev", "/dev", "--size", str(spec.disk_mib * mib), "--tmpfs", "/tmp"]
    for src, dst in spec.ro_binds:
        out += ["--ro-bind", str(src), dst]
    for src, dst in spec.rw_binds:
        out += ["--bind", str(src), dst]
    # bwrap's own root is an unbounded tmpfs: make it read-only (not recursive, so /tmp and rw binds stay rw).
    out += ["--remount-ro", "/", "--clearenv"]
    for k, v in sorted(spec.env.items()):
        out += ["--setenv", k, v]
    out += ["--chdir", spec.chdir, "--", *argv]
    return out


def _check_sources(spec: SandboxSpec) -> None:
    uid, gid = (spec.host_uid, spec.host_gid) if drops_privilege() else (os.getuid(), os.getgid())
    for src, _ in spec.ro_binds:
        if not _reachable(src, uid, gid, write=False):
            raise SandboxError(f"sandbox: read-only bind source {src} is not readable by host uid {uid}")
    for src, _ in spec.rw_binds:
        if not _reachable(src, uid, gid, write=True):
            raise SandboxError(f"sandbox: writable bind source {src} is not writable by host uid {uid} "
                               "(see give_to_sandbox)")
    if spec.rootfs is not None and not _reachable(spec.rootfs, uid, gid, write=False):
        raise SandboxError(f"sandbox: rootfs {spec.rootfs} is not readable by host uid {uid}")


def _data_fd(data: bytes) -> int:
    """A pipe read end holding ``data`` (small: fits the pipe buffer), for ``--ro-bind-data``."""
    r, w = os.pipe()
    try:
        os.write(w, data)
    finally:
        os.close(w)
    return r


def _descendants(root: int) -> list[int]:
    """``root`` and every live process below it (the sandbox calls setsid, so a session would miss it)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                ppid = int(Path(f"/proc/{entry.name}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def cpu_usage(root: int) -> tuple[float, float]:
    """(CPU seconds, run-queue wait seconds) of ``root``'s process tree, read from /proc before it is killed.

    A process that slept used neither; a starved one (a host too loaded to run it) waited on the run queue.
    """
    tick = os.sysconf("SC_CLK_TCK")
    cpu = wait = 0.0
    for pid in _descendants(root):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
            cpu += sum(int(x) for x in fields[11:15]) / tick  # utime stime cutime cstime
            wait += int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    return cpu, wait


#: Set while an interrupted certification winds down: every sandbox of this process stops (its group killed)
#: and raises :class:`Abandoned`, so an exam in flight ends in seconds, not after its last grade (attrs: 40 min).
_ABANDON = threading.Event()
#: How often a running sandbox looks at :data:`_ABANDON` (its output is read in between, as before).
ABANDON_POLL_SECONDS = 0.5


def abandon_runs(on: bool) -> None:
    """Stop every running sandbox of this process and refuse new ones (``on``), or let them run again."""
    if on:
        _ABANDON.set()
    else:
        _ABANDON.clear()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _await_namespace_end(info_r: int, limit: float = 10.0) -> None:
    """Wait until the sandbox's pid-namespace init (bwrap's ``child-pid``) is dead or a zombie.

    Killing bwrap only *signals* that init (parent-death signal); the kernel then kills and reaps every other
    process in the namespace before init itself can exit, so once init is gone, nothing from the run is left.
    """
    try:
        data = os.read(info_r, 65536)
    except OSError:
        data = b""
    finally:
        os.close(info_r)
    try:
        pid = int(json.loads(data.split(b"}", 1)[0] + b"}")["child-pid"])
    except (ValueError, KeyError, TypeError):
        return  # bwrap never got as far as starting the namespace
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            return
        if state in (b"Z", b"X"):
            return
        time.sleep(0.005)


def run(spec: SandboxSpec, argv: Sequence[str], *, time_seconds: float | None = None,
        stdin_data: bytes | None = None) -> SandboxResult:
    """Run ``argv`` inside the sandbox; wall-clock kill at ``time_seconds`` (default: the spec's).

    ``stdin_data`` is the program's stdin (an unlinked host temp file, so it never appears in the sandbox's
    file system); default: ``/dev/null``.

    Raises :class:`SandboxUnavailable`/:class:`SandboxError` only when it cannot start; anything the sandboxed
    program does (including bwrap's own setup failing, exit 1 with ``bwrap:`` on stderr) is in the result.
    """
    _check_sources(spec)
    if _ABANDON.is_set():
        raise Abandoned("the certification was interrupted before this run started")
    uid = inside_uid(spec.host_uid if drops_privilege() else None)
    passwd = f"root:x:0:0::/:/usr/sbin/nologin\nsandbox:x:{uid}:{uid}::/tmp:/bin/sh\n".encode()
    group = f"root:x:0:\nsandbox:x:{uid}:\n".encode()
    info_r, info_w = os.pipe()
    os.set_blocking(info_r, False)
    fds = (_data_fd(passwd), _data_fd(group), info_w)
    limit = spec.time_seconds if time_seconds is None else time_seconds
    t0 = time.monotonic()
    stdin: int | IO[bytes] = subprocess.DEVNULL
    try:
        if stdin_data is not None:
            fh = tempfile.TemporaryFile()  # noqa: SIM115 (closed in the finally below)
            stdin = fh
            fh.write(stdin_data)
            fh.seek(0)
        full = build_argv(spec, argv, passwd_fd=fds[0], group_fd=fds[1], info_fd=fds[2])
        proc = subprocess.Popen(full, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, pass_fds=fds, env={"PATH": "/usr/bin:/bin"}, cwd="/")
    except (OSError, SandboxError) as exc:
        os.close(info_r)
        if isinstance(exc, SandboxError):
            raise
        raise SandboxUnavailable(f"sandbox could not start: {type(exc).__name__}: {exc.strerror}") from exc
    finally:
        for fd in fds:
            os.close(fd)
        if not isinstance(stdin, int):
            stdin.close()
    deadline = t0 + limit
    bufs: dict[int, Capture] = {}
    timed_out = abandoned = False
    assert proc.stdout is not None and proc.stderr is not None
    with selectors.DefaultSelector() as sel:
        for stream in (proc.stdout, proc.stderr):
            sel.register(stream, selectors.EVENT_READ)
            bufs[stream.fileno()] = Capture()
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            if _ABANDON.is_set():
                abandoned = True
                break
            for key, _ in sel.select(min(remaining, ABANDON_POLL_SECONDS)):
                fd = key.fd
                chunk = os.read(fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                bufs[fd].add(chunk)  # drained to the end, so the child never blocks; head and tail kept
    if not (timed_out or abandoned):
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    usage: tuple[float | None, float | None] = cpu_usage(proc.pid) if timed_out else (None, None)
    _kill_group(proc.pid)  # on timeout: the sandbox; otherwise: leftovers in bwrap's group, if any
    proc.wait()
    _await_namespace_end(info_r)
    out, err = bufs[proc.stdout.fileno()].value(), bufs[proc.stderr.fileno()].value()
    proc.stdout.close()
    proc.stderr.close()
    if abandoned:
        raise Abandoned("the certification was interrupted: this run was stopped")
    return SandboxResult(proc.returncode, out, err, timed_out, time.monotonic() - t0, *usage)
