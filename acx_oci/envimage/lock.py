"""The lock of an environment image: resolved on the host by a resolver that cannot build, fetched by hash.

``uv pip compile --no-build`` resolves the spec's requirements (re-serialised by
:mod:`acx_oci.envimage.requirement`) for the image's own Python and platform (``--python-version X.Y
--python-platform <arch>-manylinux_2_<glibc>``: markers are the image's, not the host's) into a PEP 751
``pylock.toml`` naming one wheel per package with its URL and sha256. uv never builds: a local path or a direct
URL is refused, a requirement whose releases are all source distributions is refused (and named, as
:class:`NoWheel`), a wheel's ``Requires-Dist`` naming a URL is refused. No uv configuration is read
(``--no-config``, every ``UV_*`` variable dropped, ``UV_PYTHON_DOWNLOADS=never``); the index and
``--find-links`` directories are the caller's. Then each locked wheel is fetched by its URL (ours: bounded in
size and time; a ``file:`` URL only inside a ``--find-links`` directory or a ``file:`` index) and its sha256
checked against the lock. The package under test is dropped from the lock before anything is fetched.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acx_oci.crypto import StreamDigest
from acx_oci.envimage import sdist
from acx_oci.envimage.build import oci_arch
from acx_oci.envimage.requirement import admit, normalize, shown
from acx_oci.errors import MachineUnfit, NoWheel, UsageError

DEFAULT_INDEX = "https://pypi.org/simple"
UV_SECONDS = 900.0
MAX_UV_OUTPUT = 16 * 1024 * 1024
MAX_WHEEL_BYTES = 1024 * 1024 * 1024
FETCH_SECONDS = 900.0
FETCH_WORKERS = 4
#: glibc of each suite's Debian (``manylinux_2_<n>``); uv knows tags up to :data:`_UV_GLIBC_MAX`.
GLIBC = {"bullseye": 31, "bookworm": 36, "trixie": 41}
_UV_GLIBC_MAX = 40
#: The suite's python3 exactly (``python_full_version`` markers such as coverage's ``<= "3.11.0a6"`` need it).
PYTHON_FULL = {"bullseye": "3.9.2", "bookworm": "3.11.2", "trixie": "3.13.5"}
_MACHINE = {"amd64": "x86_64", "arm64": "aarch64"}
_WHEEL = re.compile(r"^([A-Za-z0-9_.]+)-([A-Za-z0-9_.!+]+)(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$")
_UNREACHABLE = re.compile(r"(error sending request|dns error|Could not connect|Connection refused|timed out|"
                          r"failed to lookup address|Network is unreachable|certificate)[^\n]*", re.I)


@dataclass(frozen=True)
class Pinned:
    """One resolved wheel: the lock's ``name==version --hash=sha256:…`` line."""

    name: str
    version: str
    filename: str
    sha256: str

    def line(self) -> str:
        """The lock line pip's ``--require-hashes`` checks the file against."""
        return f"{self.name}=={self.version} --hash=sha256:{self.sha256}"


@dataclass(frozen=True)
class Locked:
    """One package of uv's lock: the wheel's URL, its sha256 and (when the index says) its size."""

    name: str
    version: str
    url: str
    sha256: str
    size: int | None


def python_platform(suite: str) -> str:
    """uv's ``--python-platform`` for the image: its machine and its Debian's glibc (older manylinux fits)."""
    arch = oci_arch()
    if arch not in _MACHINE:
        raise MachineUnfit(f"env build resolves for x86_64 and aarch64 images; this machine is {arch}")
    return f"{_MACHINE[arch]}-manylinux_2_{min(GLIBC[suite], _UV_GLIBC_MAX)}"


def uv_binary() -> str:
    """The uv executable of the ``uv`` package this tool depends on (never one found on PATH)."""
    try:
        from uv import find_uv_bin
    except ImportError:
        raise MachineUnfit("uv is not installed (pip install uv): env build resolves with it") from None
    return str(find_uv_bin())


def uv_env() -> dict[str, str]:
    """The host's environment without uv's configuration: the resolution depends on the spec and the index."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_", "VIRTUAL_ENV", "CONDA_"))}
    env.update(UV_PYTHON_DOWNLOADS="never", UV_NO_PROGRESS="1", NO_COLOR="1")
    return env


def compile_argv(inputs: dict[str, Any], reqs: Path, out: Path, *, index_url: str | None,
                 find_links: Sequence[Path], no_deps: bool = False, exclude_newer: str | None = None,
                 constraints: Path | None = None) -> list[str]:
    """``uv pip compile`` for the image's Python and platform, never building, reading no configuration."""
    argv = [uv_binary(), "pip", "compile", "--no-config", "--no-build", "--python", sys.executable,
            "--python-version", PYTHON_FULL[inputs["suite"]], "--python-platform", python_platform(inputs["suite"]),
            "--format", "pylock.toml", "--no-header", "--color", "never", "--keyring-provider", "disabled",
            "--index-url", index_url or DEFAULT_INDEX, "-o", str(out)]
    for d in find_links:
        argv += ["--find-links", str(d)]
    if no_deps:
        argv.append("--no-deps")
    if exclude_newer:
        argv += ["--exclude-newer", exclude_newer]
    if constraints is not None:
        argv += ["--constraint", str(constraints)]
    return [*argv, str(reqs)]


def no_wheel(name: str, python: str, sdists: tuple[str, ...]) -> NoWheel:
    """The refusal of a requirement with no wheel for the image (``sdists``: its source distributions)."""
    why = "only a source distribution, whose build scripts would run" if sdists else "no wheel fits"
    how = ("wheels only: --wheels-only forbids building it (inside the sandbox otherwise)" if sdists
           else "nothing to build it from")
    return NoWheel(f"env build: {name}: no wheel for CPython {python} on linux {oci_arch()} ({why}); refused — "
                   f"{how}; or give a wheel with --find-links DIR", name, sdists)


def _refusal(out: str, python: str, index_url: str | None, find_links: Sequence[Path]) -> UsageError:
    """uv's refusal as one line: no wheel (named), a URL dependency, the network, or uv's own last words."""
    if (m := re.search(r"Wheels are required for `([^`]+)`", out)) is not None:
        name = normalize(m.group(1))
        wanted = re.search(r"Because ([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]{1,64}) has no usable wheels", out)
        version = wanted.group(2) if wanted is not None and normalize(wanted.group(1)) == name else None
        return no_wheel(name, python, sdist.of_version(sdist.sources(name, index_url, find_links), version))
    if (m := re.search(r"Package `([^`]+)` was included as a URL dependency", out)) is not None:
        return UsageError(f"env build: a wheel requires {shown(m.group(1))} by a direct URL; refused (only index "
                          "releases are resolved, nothing is fetched from such a URL or built)")
    if "Failed to fetch" in out and (net := _UNREACHABLE.search(out)) is not None:
        return MachineUnfit(f"env build: the package index could not be reached from this machine "
                            f"({shown(net.group(0))}); connect it, or give a reachable --index-url")
    if (m := re.search(r"([A-Za-z0-9][A-Za-z0-9._-]*) was not found in the package registry", out)):
        name = normalize(m.group(1))
        return NoWheel(f"env build: {name}: no release fits (not on the index or in --find-links); refused", name)
    if (m := re.search(r"(?:there is no version of|no versions of) ([A-Za-z0-9][A-Za-z0-9._-]*)", out)):
        name = normalize(m.group(1))
        return NoWheel(f"env build: {name}: no release fits CPython {python} on linux {oci_arch()}; refused", name)
    lines = [ln.strip() for ln in out.splitlines() if ln.strip() and not ln.startswith("warning:")]
    return UsageError(f"env build: the requirements could not be resolved: {shown(' | '.join(lines[:3]))}")


def compile_lock(inputs: dict[str, Any], dest: Path, *, index_url: str | None = None,
                 find_links: Sequence[Path] = (), no_deps: bool = False,
                 exclude_newer: str | None = None, constrained: bool = True) -> list[Locked]:
    """uv's lock of ``inputs["requirements"]`` (each admitted again: only re-serialised lines are written), with
    the repository's own pins as constraints (``constrained``)."""
    dest.mkdir(parents=True, exist_ok=True)
    reqs, out, pins = dest / "requirements.in", dest / "pylock.toml", dest / "constraints.txt"
    reqs.write_text("".join(admit(r, "environment spec") + "\n" for r in inputs["requirements"]), "utf-8")
    use = constrained and bool(inputs.get("constraints"))
    if use:
        pins.write_text("".join(admit(c, "environment spec constraint") + "\n" for c in inputs["constraints"]),
                        "utf-8")
    out.unlink(missing_ok=True)
    argv = compile_argv(inputs, reqs, out, index_url=index_url, find_links=find_links, no_deps=no_deps,
                        exclude_newer=exclude_newer, constraints=pins if use else None)
    try:
        res = subprocess.run(argv, capture_output=True, timeout=UV_SECONDS, env=uv_env(), cwd=dest, check=False,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise UsageError(f"env build: uv pip compile did not finish within {UV_SECONDS:g} s") from None
    if res.returncode != 0 or not out.is_file():
        raise _refusal((res.stdout + res.stderr)[-MAX_UV_OUTPUT:].decode("utf-8", "replace"), inputs["python"],
                       index_url, find_links)
    return read_pylock(out)


def read_pylock(path: Path) -> list[Locked]:
    """The packages of uv's ``pylock.toml``: each exactly one wheel with a sha256 (no sdist, path or VCS)."""
    if path.stat().st_size > MAX_UV_OUTPUT:
        raise UsageError(f"env build: uv's lock is over {MAX_UV_OUTPUT} bytes")
    doc = tomllib.loads(path.read_text("utf-8"))
    out: list[Locked] = []
    for pkg in doc.get("packages") or []:
        name, version = normalize(str(pkg.get("name"))), str(pkg.get("version"))
        wheels = pkg.get("wheels") or []
        if not wheels or any(k in pkg for k in ("sdist", "archive", "vcs", "directory")):
            raise UsageError(f"env build: uv locked {shown(name)} as something other than a wheel; refused")
        wheel = wheels[0]
        digest = str((wheel.get("hashes") or {}).get("sha256") or "")
        if not re.fullmatch(r"[0-9a-f]{64}", digest) or not isinstance(wheel.get("url"), str):
            raise UsageError(f"env build: uv's lock gives {shown(name)} no URL and sha256")
        size = wheel.get("size")
        out.append(Locked(name, version, wheel["url"], digest, size if isinstance(size, int) else None))
    return out


def _allowed(path: Path, roots: Sequence[Path]) -> bool:
    real = path.resolve()
    return any(real.is_relative_to(r.resolve()) for r in roots)


def fetch(item: Locked, dist: Path, roots: Sequence[Path], index_url: str | None) -> Pinned:
    """The wheel's bytes into ``dist`` (nothing of it runs), its sha256 checked against the lock."""
    parsed = urlparse(item.url)
    name = unquote(Path(parsed.path).name)
    m = _WHEEL.match(name)
    if m is None or normalize(m.group(1)) != item.name or "/" in name:
        raise UsageError(f"env build: {shown(item.url)} is not a wheel of {item.name}; only wheels are installed")
    limit = min(item.size + 1 if item.size is not None else MAX_WHEEL_BYTES, MAX_WHEEL_BYTES)
    out, seen = dist / name, StreamDigest()
    if parsed.scheme == "file":
        src = Path(unquote(parsed.path))
        if not _allowed(src, roots) or src.is_symlink() or not src.is_file() or src.stat().st_size > limit:
            raise UsageError(f"env build: {shown(str(src))} is no regular file in a --find-links directory or a "
                             "file: index; not fetched")
        shutil.copyfile(src, out)
        seen.update(out.read_bytes())
    elif parsed.scheme == "https" or (parsed.scheme == "http" and (index_url or "").startswith("http://")):
        _download(item.url, out, seen, limit)
    else:
        raise UsageError(f"env build: {shown(item.url)}: only https: (or the index's own http:) and file: wheels")
    if seen.digest != "sha256:" + item.sha256:
        out.unlink(missing_ok=True)
        raise UsageError(f"env build: {name} hashes to {seen.digest}, the lock says {item.sha256}")
    out.chmod(0o644)
    return Pinned(item.name, m.group(2), name, item.sha256)


def _download(url: str, out: Path, seen: StreamDigest, limit: int) -> None:
    import requests

    start = time.monotonic()
    try:
        with requests.get(url, stream=True, timeout=(30, 60), allow_redirects=True) as res, out.open("wb") as fh:
            res.raise_for_status()
            for chunk in res.iter_content(1 << 20):
                if seen.size + len(chunk) > limit:
                    raise UsageError(f"env build: {out.name} is larger than its index says ({limit - 1} bytes)")
                if time.monotonic() - start > FETCH_SECONDS:
                    raise UsageError(f"env build: {out.name} took over {FETCH_SECONDS:g} s to fetch")
                seen.update(chunk)
                fh.write(chunk)
    except requests.RequestException as exc:
        raise MachineUnfit(f"env build: fetching {out.name} failed ({shown(type(exc).__name__)}); the index or "
                           "the network") from None


def fetch_all(items: Sequence[Locked], dist: Path, roots: Sequence[Path], index_url: str | None) -> list[Pinned]:
    """Every locked wheel into ``dist``, a few at a time; in the lock's order."""
    dist.mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(FETCH_WORKERS) as pool:
        return list(pool.map(lambda it: fetch(it, dist, roots, index_url), items))


def file_roots(index_url: str | None, find_links: Sequence[Path]) -> list[Path]:
    """Where a ``file:`` wheel may come from: the ``--find-links`` directories and a ``file:`` index."""
    roots = list(find_links)
    if index_url and urlparse(index_url).scheme == "file":
        roots.append(Path(unquote(urlparse(index_url).path)))
    return roots


#: Later dates tried, a year apart, when nothing resolves as of the fix's own (then: as of today).
MAX_LATER_YEARS = 6


def later_dates(first: str | None, today: str) -> list[str | None]:
    """``first`` (``YYYY-MM-DDT23:59:59Z``), the same day of each later year before ``today``, then None (now)."""
    if first is None:
        return [None]
    day = first[4:10].replace("-02-29", "-02-28")
    out: list[str | None] = [first]
    for n in range(1, MAX_LATER_YEARS + 1):
        if (later := f"{int(first[:4]) + n}{day}") >= today:
            break
        out.append(f"{later}{first[10:]}")
    return [*out, None]


def _attempts(inputs: dict[str, Any], dest: Path, notes: list[str], **args: Any) -> list[Locked]:
    """As of the spec's date and within the repository's pins; failing that without the pins; failing that as
    of a year later, and so on up to today (old releases often have no wheel for the image's Python: MarkupSafe
    had none for 3.9 in 2020). Each step given up is said in ``notes``; the last refusal is raised."""
    from datetime import UTC, datetime

    last: UsageError | None = None
    for when in later_dates(inputs.get("excludeNewer"), datetime.now(UTC).strftime("%Y-%m-%d")):
        for pinned in ((True, False) if inputs.get("constraints") else (False,)):
            try:
                locked = compile_lock(inputs, dest, exclude_newer=when, constrained=pinned, **args)
            except MachineUnfit:
                raise
            except UsageError as exc:  # NoWheel too: a version with no wheel for the image's Python
                notes.append(f"as of {(when or 'today')[:10]}{' with the repository pins' if pinned else ''}: "
                             f"{str(exc)[:200]}")
                last = exc
                continue
            if last is not None:
                notes.append(f"resolved as of {(when or 'today')[:10]}"
                             f"{' within' if pinned else ' without'} the repository's pins")
            return locked
    assert last is not None
    raise last


def resolve(inputs: dict[str, Any], dest: Path, *, index_url: str | None = None, find_links: Sequence[Path] = (),
            notes: list[str] | None = None) -> tuple[list[Pinned], list[str]]:
    """(the lock, packages under test left out): uv's lock, fetched by hash into ``dest/dist``: as of the
    spec's date (``excludeNewer``) within the repository's own pins when that resolves (:func:`_attempts`)."""
    if (dest / "dist").exists():
        shutil.rmtree(dest / "dist")  # what an earlier, refused resolution left
    locked = _attempts(inputs, dest, notes if notes is not None else [], index_url=index_url, find_links=find_links)
    excluded = set(inputs["excludePackages"])
    left_out = sorted({it.name for it in locked if it.name in excluded})
    keep = [it for it in locked if it.name not in excluded]
    return fetch_all(keep, dest / "dist", file_roots(index_url, find_links), index_url), left_out


def installer(inputs: dict[str, Any], dest: Path, *, index_url: str | None = None,
              find_links: Sequence[Path] = ()) -> Pinned:
    """pip's own wheel (hashed like the rest) into ``dest/tools``: it runs inside the sandbox, from the wheel."""
    one = {**inputs, "requirements": ["pip"]}
    locked = compile_lock(one, dest / "pip-lock", index_url=index_url, find_links=find_links, no_deps=True)
    return fetch_all(locked, dest / "tools", file_roots(index_url, find_links), index_url)[0]
