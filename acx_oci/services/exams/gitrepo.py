"""Read a git repository as untrusted input: through a git dir the tool owns, plumbing commands only.

A repository's own ``.git/config`` can name programs (``gpg.program`` with ``log.showSignature``,
``core.pager``, ``diff.external``, filters, ``core.sshCommand``, ``include.path``, ``includeIf``), and git runs
them for commands as plain as ``log``. So git never reads that config: :func:`open_repo` builds a scratch
bare git dir of the tool's own (its config written by ``git init --template=``), links the repository's pack
and loose object *files* into it one by one (regular files only, never the repository's ``alternates``, so
no object outside the repository is read), and copies its refs as validated text. Every command then runs
with ``--git-dir`` at that scratch dir, no system or global config, no pager, no signature display and
programs switched off by ``-c`` besides. We chose this over running git inside the sandbox: it needs no
bubblewrap on the importing host and leaves git nothing of the repository's to read but objects and refs.

Only object-reading commands run (``rev-parse``, ``ls-tree``, ``cat-file``, ``log``). A tree is refused,
one line naming the path, when it holds a symlink, a submodule, a name leaving the tree, a file over
:data:`MAX_FILE_BYTES`, more than :data:`MAX_FILES` files or more than :data:`MAX_TREE_BYTES` in all; a
file that is not UTF-8 text is refused too, except in the base tree, where it is left out and named.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
import subprocess
import tempfile
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from acx_oci.errors import AcxError, PathOutside, TreeRefused, TreeTooSlow, UsageError
from acx_oci.safetree import parts_of

GIT_SECONDS = 30.0
MAX_OUTPUT = 64 * 1024 * 1024
MAX_FILE_BYTES = 1024 * 1024
MAX_FILES = 20_000  # as many as an exam directory may hold (files.MAX_TREE_FILES)
MAX_TREE_BYTES = 64 * 1024 * 1024  # a base tree the size of sympy's (~50 MiB of text)
MAX_OBJECT_FILES = 1_000_000  # loose objects and pack files linked into the scratch dir (run `git gc` beyond)
MAX_REFS = 100_000
MAX_LINKS = 1_000  # symlinks of a tree read as the file they name (more: all left out or refused)
MAX_REF_FILE_BYTES = 64 * 1024 * 1024  # packed-refs
_SHA = re.compile(r"^[0-9a-f]{40}$")
_HEX2 = re.compile(r"^[0-9a-f]{2}$")
_LOOSE = re.compile(r"^[0-9a-f]{38}$")
_PACK = re.compile(r"^pack-[0-9a-f]{40,64}\.(pack|idx)$")
_REF_NAME = re.compile(r"^refs/[A-Za-z0-9._/+@-]{1,900}$")
#: Belt and braces beside the scratch config: every key that names a program, off.
_OFF = ("core.fsmonitor=false", "core.hooksPath=/dev/null", "gpg.program=false", "gpg.ssh.program=false",
        "gpg.x509.program=false", "log.showSignature=false", "core.pager=cat", "pager.log=false",
        "diff.external=", "core.sshCommand=false", "core.askPass=false", "credential.helper=",
        "protocol.allow=never", "core.alternateRefsCommand=", "uploadpack.packObjectsHook=",
        "log.mailmap=false", "core.editor=false", "sequence.editor=false", "submodule.recurse=false")
_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_REPLACE_OBJECTS": "1", "GIT_PAGER": "cat", "PAGER": "cat",
        "GIT_ATTR_NOSYSTEM": "1", "GIT_NO_LAZY_FETCH": "1", "LC_ALL": "C", "TZ": "UTC", "PATH": "/usr/bin:/bin"}


@dataclass(frozen=True)
class Repo:
    """A repository opened for reading: ``path`` as the user named it, ``gitdir`` the tool's scratch git dir
    holding its objects and refs (removed when this object is collected)."""

    path: Path
    gitdir: Path
    borrows: bool  # the repository has objects/info/alternates, which are never followed
    _scratch: tempfile.TemporaryDirectory[str] = field(repr=False, compare=False)


def _git_dir_of(path: Path) -> Path:
    """The repository's git directory, found by looking, never by asking git (which would read its config)."""
    for cand, what in ((path / ".git", ".git"), (path, "the repository")):
        try:
            st = os.lstat(cand)
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode):
            raise PathOutside(f"{path}: {what} is a symlink; refused (name the repository itself)")
        if stat.S_ISREG(st.st_mode) and cand.name == ".git":
            raise UsageError(f"{path}: .git is a file (a worktree or submodule checkout); name the repository "
                             "it points to")
        if stat.S_ISDIR(st.st_mode) and (cand / "objects").is_dir() and (cand / "HEAD").is_file():
            return cand
    raise UsageError(f"{path}: not a git repository (no .git directory with objects and HEAD)")


def _plain_dir(path: Path, what: str) -> bool:
    """True for a real directory, False when absent; a symlink is refused (it could lead off the repository)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise PathOutside(f"{what} is not a plain directory; refused")
    return True


def _link_objects(src: Path, dst: Path) -> None:
    """Symlink each regular loose-object and pack file of ``src`` into ``dst``: never ``info/alternates``."""
    count = 0
    with os.scandir(src) as it:
        top = sorted(e.name for e in it)
    for name in top:
        sub = src / name
        if _HEX2.match(name) and _plain_dir(sub, f"objects/{name}"):
            pattern = _LOOSE
        elif name == "pack" and _plain_dir(sub, "objects/pack"):
            pattern = _PACK
        else:
            continue
        (dst / name).mkdir(exist_ok=True)
        with os.scandir(sub) as files:
            for f in files:
                if pattern.match(f.name) and f.is_file(follow_symlinks=False):
                    count += 1
                    if count > MAX_OBJECT_FILES:
                        raise TreeRefused(f"{src}: over {MAX_OBJECT_FILES} object files; run `git gc` first")
                    os.symlink(f.path, dst / name / f.name)


def _read_small(path: Path, limit: int) -> str | None:
    """A regular file's text (not followed through a symlink), or None when it is absent."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PathOutside(f"{path}: cannot read ({exc.strerror}); refused") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise PathOutside(f"{path}: not a regular file; refused")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TreeRefused(f"{path}: over {limit} bytes; refused")
    return data.decode("utf-8", "replace")


def _ref_value(text: str) -> str | None:
    value = text.strip()
    if _SHA.match(value) or (value.startswith("ref: ") and _REF_NAME.match(value[5:])):
        return value
    return None


def _copy_refs(src: Path, dst: Path) -> None:
    """HEAD, packed-refs, loose refs and ``shallow``, copied as validated text (a bad line is dropped)."""
    head = _ref_value(_read_small(src / "HEAD", 4096) or "")
    (dst / "HEAD").write_text((head or "ref: refs/heads/main") + "\n")
    packed = _read_small(src / "packed-refs", MAX_REF_FILE_BYTES) or ""
    keep = [ln for ln in packed.splitlines()
            if (len(ln) > 41 and _SHA.match(ln[:40]) and _REF_NAME.match(ln[41:])) or
            (ln.startswith("^") and _SHA.match(ln[1:]))]
    (dst / "packed-refs").write_text("".join(ln + "\n" for ln in keep[:MAX_REFS]))
    shallow = _read_small(src / "shallow", MAX_REF_FILE_BYTES)
    if shallow is not None:
        (dst / "shallow").write_text("".join(ln + "\n" for ln in shallow.split() if _SHA.match(ln)))
    count = 0
    if not _plain_dir(src / "refs", "refs"):
        return
    for root, dirs, files in os.walk(src / "refs"):  # os.walk does not follow directory links
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), src)
            count += 1
            if count > MAX_REFS:
                raise TreeRefused(f"{src}: over {MAX_REFS} refs; refused")
            if not _REF_NAME.match(rel) or os.path.islink(os.path.join(root, name)):
                continue
            value = _ref_value(_read_small(src / rel, 4096) or "")
            if value is not None:
                (dst / rel).parent.mkdir(parents=True, exist_ok=True)
                (dst / rel).write_text(value + "\n")


def open_repo(path: Path) -> Repo:
    """``path``'s objects and refs behind a scratch git dir of the tool's own (see the module's docstring)."""
    src = _git_dir_of(Path(os.path.abspath(path)))  # links into the scratch dir must not be relative
    if not _plain_dir(src / "objects", f"{path}: objects"):
        raise UsageError(f"{path}: not a git repository (no objects directory)")
    scratch = tempfile.TemporaryDirectory(prefix="acx-git-")
    gitdir = Path(scratch.name) / "repo.git"
    try:
        _run(["git", "init", "-q", "--bare", "--template=", str(gitdir)], cwd=Path(scratch.name))
        _link_objects(src / "objects", gitdir / "objects")
        _copy_refs(src, gitdir)
    except BaseException:
        scratch.cleanup()
        raise
    repo = Repo(path, gitdir, (src / "objects" / "info" / "alternates").exists(), scratch)
    weakref.finalize(repo, scratch.cleanup)
    return repo


def run_git(where: Repo | Path, *args: str, max_bytes: int = MAX_OUTPUT, seconds: float = GIT_SECONDS,
            stdin: bytes | None = None, env_extra: dict[str, str] | None = None) -> bytes:
    """``git args`` on an opened repository (its scratch git dir), or in a scratch work tree of the tool's own
    (``git apply``), with at most ``max_bytes`` of output and ``seconds`` of time; UsageError otherwise."""
    off = [a for kv in _OFF for a in ("-c", kv)]
    if isinstance(where, Repo):
        argv = ["git", "--no-pager", *off, f"--git-dir={where.gitdir}", *args]
        cwd, label = where.gitdir, str(where.path)
    else:
        argv, cwd, label = ["git", "--no-pager", *off, *args], where, str(where)
    try:
        return _run(argv, cwd=cwd, what=f"git {args[0]}", max_bytes=max_bytes, seconds=seconds, stdin=stdin,
                    env_extra=env_extra)
    except UsageError as exc:
        raise UsageError(f"git {' '.join(args[:2])} in {label}: {exc}") from None


def _run(argv: list[str], *, cwd: Path, what: str = "git", max_bytes: int = MAX_OUTPUT, seconds: float = GIT_SECONDS,
         stdin: bytes | None = None, env_extra: dict[str, str] | None = None) -> bytes:
    """One bounded git process; its last line of stderr as a UsageError on failure."""
    env = {**_ENV, "HOME": str(cwd), "XDG_CONFIG_HOME": str(cwd), **(env_extra or {})}
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
        if stdin is not None:
            inp.write(stdin)
            inp.seek(0)
        try:
            proc = subprocess.Popen(argv, stdin=inp, stdout=subprocess.PIPE, stderr=err, cwd=cwd, env=env)
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
                raise TreeRefused(f"{what}: output over {max_bytes} bytes; refused")
            code = proc.wait()
        finally:
            timer.cancel()
            if proc.stdout is not None:
                proc.stdout.close()
            proc.wait()
        if fired.is_set():
            raise TreeTooSlow(f"{what}: took over {seconds:g}s; refused")
        if code != 0:
            err.seek(0)
            msg = err.read(400).decode("utf-8", "replace").strip().splitlines()
            raise UsageError(msg[-1] if msg else f"exit {code}")
        return out


_PATCH_REFUSED = re.compile(rb"^(GIT binary patch|Binary files .* differ|(new file |new |old )?mode 120000)",
                            re.M)


def check_patch(patch: bytes, what: str, max_bytes: int) -> None:
    """A patch an exam may take: at most ``max_bytes``, text only (no binary patch) and no symlink made."""
    if len(patch) > max_bytes:
        raise UsageError(f"{what}: patch over {max_bytes} bytes; refused")
    found = _PATCH_REFUSED.search(patch)
    if found:
        kind = "a symlink" if found.group(0).endswith(b"120000") else "a binary file"
        raise UsageError(f"{what}: the patch makes {kind} ({found.group(0).decode('ascii', 'replace')[:40]}); "
                         "exams hold text files only")


def resolve(repo: Repo, rev: str) -> str:
    """The full commit id ``rev`` names (``rev^`` too); a name that is no commit is one line."""
    if rev.startswith("-") or not rev.strip():
        raise UsageError(f"not a commit: {rev!r}")
    try:
        out = run_git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}",
                      max_bytes=4096).decode("ascii", "replace").strip()
    except (UsageError, TreeRefused):
        out = ""
    if not _SHA.match(out):
        hint = (" (its objects/info/alternates are not followed: run `git repack -a -d` in it first)"
                if repo.borrows else "")
        raise UsageError(f"{repo.path}: {rev!r} names no commit{hint}")
    return out


def commit_date(repo: Repo, commit: str) -> str:
    """The committer date of ``commit`` as YYYY-MM-DD (UTC)."""
    out = run_git(repo, "log", "-1", "--no-show-signature", "--no-mailmap", "--format=%cd",
                  "--date=format-local:%Y-%m-%d", commit, max_bytes=64)
    return out.decode("ascii", "replace").strip()


def commit_message(repo: Repo, commit: str) -> str:
    """The commit's message (bounded), as text."""
    return run_git(repo, "log", "-1", "--no-show-signature", "--no-mailmap", "--format=%B", commit,
                   max_bytes=64 * 1024).decode("utf-8", "replace")


@dataclass(frozen=True)
class TreeBlob:
    """One blob of a tree: its mode, object id and size."""

    mode: str
    sha: str
    size: int


def ls_tree(repo: Repo, commit: str, skipped: list[str] | None = None) -> dict[str, TreeBlob]:
    """Every entry of ``commit``'s tree, refused as a whole on a bad name or size; a link, a submodule or a
    file over :data:`MAX_FILE_BYTES` is refused too, or, given ``skipped``, left out and named there as
    ``path (why)`` (a base tree: the model works without them; the fix and its tests never are)."""
    raw = run_git(repo, "ls-tree", "-r", "-z", "--long", "--full-tree", commit)
    out: dict[str, TreeBlob] = {}
    links = _in_tree_links(repo, raw)
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
        try:
            clean = "/".join(parts_of(name, "repository path"))
        except AcxError:
            raise PathOutside(f"{commit[:12]}: {name!r} leaves the tree; refused") from None
        if any(p.lower() == ".git" for p in clean.split("/")):
            raise PathOutside(f"{commit[:12]}: {name!r} is inside a .git directory; refused")
        if clean != name or "\\" in name:
            raise PathOutside(f"{commit[:12]}: {name!r} is not a plain relative path; refused")
        if mode == "120000" and name in links:  # a link to a file of the same tree is read as that file
            mode, sha, size = links[name]
        why = ("symlink" if mode == "120000" else f"{kind} (submodule)" if kind != "blob"
               else f"{int(size)} bytes, over {MAX_FILE_BYTES}" if int(size) > MAX_FILE_BYTES else None)
        if why is not None and skipped is not None:
            skipped.append(f"{name} ({why})")
            continue
        if mode == "120000":
            raise PathOutside(f"{commit[:12]}: {name!r} is a symlink; refused")
        if kind != "blob":
            raise PathOutside(f"{commit[:12]}: {name!r} is a {kind} (submodule); refused")
        if why is not None:
            raise TreeRefused(f"{commit[:12]}: {name} is {int(size)} bytes (over {MAX_FILE_BYTES}); refused")
        total += int(size)
        out[name] = TreeBlob(mode, sha, int(size))
        if len(out) > MAX_FILES or total > MAX_TREE_BYTES:
            raise TreeRefused(f"{commit[:12]}: tree over {MAX_FILES} files or {MAX_TREE_BYTES} bytes; refused")
    return out


def _in_tree_links(repo: Repo, raw: bytes) -> dict[str, tuple[str, str, str]]:
    """Symlinks of a ``ls-tree`` listing that lead, by name, to a regular file of the same tree: ``{link: (mode,
    sha, size)}`` of that file. python-semver's ``tests/coerce.py -> ../docs/advanced/coerce.py`` is a test
    support module its conftest imports; left out, no test of the repository ran. Nothing is followed on disk,
    a link to a link or out of the tree stays a link (left out or refused)."""
    blobs: dict[str, tuple[str, str, str]] = {}
    links: dict[str, str] = {}
    for rec in raw.split(b"\0"):
        meta, _, name_b = rec.partition(b"\t")
        fields = meta.decode("ascii", "replace").split()
        if len(fields) == 4 and fields[1] == "blob":
            name = name_b.decode("utf-8", "replace")
            if fields[0] == "120000":
                links[name] = fields[2]
            else:
                blobs[name] = (fields[0], fields[2], fields[3])
    if not links or len(links) > MAX_LINKS:
        return {}
    request = "".join(f"{sha}\n" for sha in links.values()).encode("ascii")
    targets = run_git(repo, "cat-file", "--batch", stdin=request, max_bytes=len(links) * (4096 + 128))
    out: dict[str, tuple[str, str, str]] = {}
    pos = 0
    for name in links:
        header_end = targets.index(b"\n", pos)
        header = targets[pos:header_end].split()
        if len(header) != 3 or not header[2].isdigit():  # (``<sha> missing``: a broken object store)
            return out
        size = int(header[2])
        target = targets[header_end + 1:header_end + 1 + size].decode("utf-8", "replace")
        pos = header_end + 1 + size + 1
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
        if not target.startswith("/") and joined in blobs:
            out[name] = blobs[joined]
    return out


def read_blobs(repo: Repo, entries: dict[str, TreeBlob], skipped: list[str] | None = None) -> dict[str, str]:
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


def tree_files(repo: Repo, commit: str, skipped: list[str] | None = None) -> dict[str, str]:
    """``{path: text}`` of every file of ``commit``, under the refusals above; given ``skipped``, links, submodules,
    large and binary files are left out and named there instead."""
    return read_blobs(repo, ls_tree(repo, commit, skipped), skipped)


def repo_name(repo: Path) -> str:
    """The repository's name for exam ids: its folder's, or for a bare mirror kept as ``owner+name/repo`` (or a
    ``.git`` folder) the folder above's, without the owner (``attrs``, not ``repo``)."""
    path = repo.resolve()
    folder = path.parent.name if path.name in ("repo", ".git") else path.name
    return folder.split("+")[-1]
