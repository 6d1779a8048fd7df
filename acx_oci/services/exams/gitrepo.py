"""Read a git repository as untrusted input: plumbing commands only, bounded in output and time.

Only object-reading commands run (``rev-parse``, ``ls-tree``, ``cat-file``, ``log``): nothing touches a
work tree or an index, so a repository's own configuration cannot start a program (no fsmonitor, hooks,
external diff or textconv driver runs), and system/global configuration is ignored. A tree is refused,
one line naming the path, when it holds a symlink, a submodule, a name leaving the tree, a file over
:data:`MAX_FILE_BYTES`, more than :data:`MAX_FILES` files or more than :data:`MAX_TREE_BYTES` in all; a
file that is not UTF-8 text is refused too, except in the base tree, where it is left out and named.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from acx_oci.errors import AcxError, PathOutside, TreeRefused, UsageError
from acx_oci.safetree import parts_of

GIT_SECONDS = 30.0
MAX_OUTPUT = 64 * 1024 * 1024
MAX_FILE_BYTES = 1024 * 1024
MAX_FILES = 20_000  # as many as an exam directory may hold (files.MAX_TREE_FILES)
MAX_TREE_BYTES = 32 * 1024 * 1024
_SHA = re.compile(r"^[0-9a-f]{40}$")
_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_REPLACE_OBJECTS": "1", "LC_ALL": "C", "TZ": "UTC",
        "PATH": "/usr/bin:/bin"}


def run_git(repo: Path, *args: str, max_bytes: int = MAX_OUTPUT, seconds: float = GIT_SECONDS,
            stdin: bytes | None = None, env_extra: dict[str, str] | None = None) -> bytes:
    """``git -C repo args`` with at most ``max_bytes`` of output and ``seconds`` of time; UsageError otherwise."""
    argv = ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-C", str(repo), *args]
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
        if stdin is not None:
            inp.write(stdin)
            inp.seek(0)
        try:
            proc = subprocess.Popen(argv, stdin=inp, stdout=subprocess.PIPE, stderr=err,
                                    env={**_ENV, **(env_extra or {})})
        except OSError as exc:
            raise UsageError(f"git: cannot run ({exc.strerror})") from None
        fired = threading.Event()

        def kill() -> None:
            fired.set()
            proc.kill()

        timer = threading.Timer(seconds, kill)
        timer.start()
        try:
            assert proc.stdout is not None
            out = proc.stdout.read(max_bytes + 1)
            if len(out) > max_bytes:
                proc.kill()
                raise TreeRefused(f"git {args[0]}: output over {max_bytes} bytes; refused")
            code = proc.wait()
        finally:
            timer.cancel()
            if proc.stdout is not None:
                proc.stdout.close()
            proc.wait()
        if fired.is_set():
            raise TreeRefused(f"git {args[0]}: took over {seconds:g}s; refused")
        if code != 0:
            err.seek(0)
            msg = err.read(400).decode("utf-8", "replace").strip().splitlines()
            raise UsageError(f"git {' '.join(args[:2])} in {repo}: {msg[-1] if msg else f'exit {code}'}")
        return out


def resolve(repo: Path, rev: str) -> str:
    """The full commit id ``rev`` names (``rev^`` too); a name that is no commit is one line."""
    if rev.startswith("-") or not rev.strip():
        raise UsageError(f"not a commit: {rev!r}")
    try:
        out = run_git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}",
                      max_bytes=4096).decode("ascii", "replace").strip()
    except (UsageError, TreeRefused):
        out = ""
    if not _SHA.match(out):
        raise UsageError(f"{repo}: {rev!r} names no commit")
    return out


def commit_date(repo: Path, commit: str) -> str:
    """The committer date of ``commit`` as YYYY-MM-DD (UTC)."""
    out = run_git(repo, "log", "-1", "--format=%cd", "--date=format-local:%Y-%m-%d", commit, max_bytes=64)
    return out.decode("ascii", "replace").strip()


def commit_message(repo: Path, commit: str) -> str:
    """The commit's message (bounded), as text."""
    return run_git(repo, "log", "-1", "--format=%B", commit, max_bytes=64 * 1024).decode("utf-8", "replace")


@dataclass(frozen=True)
class Entry:
    """One blob of a tree: its mode, object id and size."""

    mode: str
    sha: str
    size: int


def ls_tree(repo: Path, commit: str) -> dict[str, Entry]:
    """Every entry of ``commit``'s tree, refused as a whole on a link, submodule, bad name or size."""
    raw = run_git(repo, "ls-tree", "-r", "-z", "--long", "--full-tree", commit)
    out: dict[str, Entry] = {}
    total = 0
    for rec in raw.split(b"\0"):
        if not rec:
            continue
        meta, _, name_b = rec.partition(b"\t")
        try:
            name = name_b.decode("utf-8")
        except UnicodeDecodeError:
            raise TreeRefused(f"{commit[:12]}: a file name is not UTF-8; refused") from None
        mode, kind, sha, size = meta.decode("ascii", "replace").split()
        if mode == "120000":
            raise PathOutside(f"{commit[:12]}: {name!r} is a symlink; refused")
        if kind != "blob":
            raise PathOutside(f"{commit[:12]}: {name!r} is a {kind} (submodule); refused")
        try:
            clean = "/".join(parts_of(name, "repository path"))
        except AcxError:
            raise PathOutside(f"{commit[:12]}: {name!r} leaves the tree; refused") from None
        if clean != name or "\\" in name:
            raise PathOutside(f"{commit[:12]}: {name!r} is not a plain relative path; refused")
        if int(size) > MAX_FILE_BYTES:
            raise TreeRefused(f"{commit[:12]}: {name} is {int(size)} bytes (over {MAX_FILE_BYTES}); refused")
        total += int(size)
        out[name] = Entry(mode, sha, int(size))
        if len(out) > MAX_FILES or total > MAX_TREE_BYTES:
            raise TreeRefused(f"{commit[:12]}: tree over {MAX_FILES} files or {MAX_TREE_BYTES} bytes; refused")
    return out


def read_blobs(repo: Path, entries: dict[str, Entry], skipped: list[str] | None = None) -> dict[str, str]:
    """The text of each entry, read by object id in one bounded ``cat-file --batch``; a file that is not UTF-8
    is refused, or, given ``skipped``, left out and named there."""
    if not entries:
        return {}
    names = sorted(entries)
    request = "".join(f"{entries[n].sha}\n" for n in names).encode("ascii")
    raw = run_git(repo, "cat-file", "--batch", stdin=request,
                  max_bytes=sum(e.size for e in entries.values()) + 128 * len(names))
    out: dict[str, str] = {}
    pos = 0
    for name in names:
        header_end = raw.index(b"\n", pos)
        sha, kind, size = raw[pos:header_end].decode("ascii", "replace").split()
        if sha != entries[name].sha or kind != "blob":
            raise TreeRefused(f"{name}: git returned {kind} {sha} for it; refused")
        body = raw[header_end + 1:header_end + 1 + int(size)]
        pos = header_end + 1 + int(size) + 1
        try:
            out[name] = body.decode("utf-8")
        except UnicodeDecodeError:
            if skipped is None:
                raise TreeRefused(f"{name}: not UTF-8 text (exams hold text files); refused") from None
            skipped.append(name)
    return out


def tree_files(repo: Path, commit: str, skipped: list[str] | None = None) -> dict[str, str]:
    """``{path: text}`` of every file of ``commit``, under the refusals above (binary files: see read_blobs)."""
    return read_blobs(repo, ls_tree(repo, commit), skipped)
