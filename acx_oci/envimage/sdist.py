"""A requirement with only a source distribution, built into a wheel inside the sandbox (the default; not under
``--wheels-only``).

The host only fetches bytes: an sdist of the refused requirement (:func:`sources`: from a ``--find-links``
directory, or the index's page over HTTPS with its ``#sha256=`` checked), its ``[build-system] requires`` read
from the archive as text and passed through the one door for requirements
(:mod:`acx_oci.envimage.requirement`: a URL or a path there refuses the build), and those build requirements
resolved like any other — by uv, which cannot build, wheels only, hashed. The build itself (``setup.py``, a
build backend) runs in a bubblewrap sandbox whose ``/`` is the image's Debian root: no network, uid 65534, a
throwaway venv in the sandbox's ``/tmp``, pip from its hashed wheel with ``--require-hashes``, ``pip wheel
--no-build-isolation --no-deps --no-index``, the one writable bind being the output directory. The wheel then
joins the resolution through ``--find-links`` and is locked by its own hash; ``acx-env.json`` names the sdist
and its digest.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlparse

from acx_oci.envimage.bounded import read_toml
from acx_oci.envimage.requirement import normalize, shown, sort_out
from acx_oci.errors import MachineUnfit, NoWheel, UsageError
from acx_oci.sandbox import SandboxSpec, give_to_sandbox, run
from acx_oci.urls import without_fragment

MAX_SDIST_BYTES = 256 * 1024 * 1024
#: A wheel built here (the sandbox's own file size limit is 1 GiB).
MAX_WHEEL_BYTES = 512 * 1024 * 1024
MAX_PYPROJECT_BYTES = 1024 * 1024
BUILD_SECONDS = 1200.0
DEFAULT_BUILD_REQUIRES = ["setuptools>=40.8.0", "wheel"]
_FILE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._+-]*?)-(\d[A-Za-z0-9._+!-]*)\.(tar\.gz|zip|tar\.bz2|tgz)$")


def _version_key(url: str) -> tuple[int, ...]:
    m = _FILE.match(unquote(Path(urlparse(url).path).name))
    return tuple(int(p[:9]) for p in re.findall(r"\d+", m.group(2))[:4]) if m else ()  # no 5000-digit int()


MAX_PAGE_BYTES = 8 * 1024 * 1024
_HREF = re.compile(r"""<a\s[^>]*href=["']([^"']+)["']""", re.I)


def _is_sdist_of(url: str, name: str) -> bool:
    m = _FILE.match(unquote(Path(urlparse(url).path).name))
    return m is not None and normalize(m.group(1)) == name


def _page(url: str) -> list[str]:
    """The file URLs of an index's page for one project (PEP 691 JSON, else PEP 503 HTML), bounded."""
    import requests

    try:
        with requests.get(url, stream=True, timeout=(30, 60), headers={
                "Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.1"}) as res:
            if res.status_code != 200:
                return []
            body = res.raw.read(MAX_PAGE_BYTES + 1, decode_content=True)
            kind = res.headers.get("Content-Type", "")
    except requests.RequestException:
        return []
    if len(body) > MAX_PAGE_BYTES:
        return []
    if "json" in kind:
        try:
            files = json.loads(body).get("files") or []
        except (ValueError, AttributeError):
            return []
        return [urljoin(url, f["url"]) + (f"#sha256={f['hashes']['sha256']}" if "sha256" in (f.get("hashes") or {})
                                          else "") for f in files if isinstance(f, dict) and isinstance(f.get("url"),
                                                                                                      str)]
    return [urljoin(url, html.unescape(h)) for h in _HREF.findall(body.decode("utf-8", "replace"))]


def sources(name: str, index_url: str | None, links: Sequence[Path]) -> tuple[str, ...]:
    """The source distributions of ``name`` in the ``--find-links`` directories and on the index's page."""
    found = [f.as_uri() for d in links if d.is_dir() for f in sorted(d.iterdir()) if _is_sdist_of(f.name, name)]
    index = (index_url or "https://pypi.org/simple").rstrip("/")
    if urlparse(index).scheme == "file":
        page = Path(unquote(urlparse(index).path)) / name / "index.html"
        if page.is_file() and page.stat().st_size <= MAX_PAGE_BYTES:
            found += [urljoin(page.as_uri(), html.unescape(h)) for h in _HREF.findall(page.read_text("utf-8",
                                                                                                    "replace"))]
    elif urlparse(index).scheme in ("http", "https"):
        found += _page(f"{index}/{name}/")
    return tuple(u for u in dict.fromkeys(found) if _is_sdist_of(u, name))


def pick(refusal: NoWheel) -> str:
    """The newest source distribution found for the refused requirement."""
    if not refusal.sdists:
        raise refusal
    return max(refusal.sdists, key=_version_key)


def file_name(url: str) -> str:
    """The file name a source distribution's URL ends with."""
    return unquote(Path(urlparse(url).path).name)


def of_version(urls: tuple[str, ...], version: str | None) -> tuple[str, ...]:
    """The sdists of exactly ``version`` (the release the resolver wanted: jmespath's ``ply==3.4``, never the
    newest 3.11); all of them when it named none or none is of it."""
    if version is None:
        return urls
    kept = tuple(u for u in urls if (m := _FILE.match(unquote(Path(urlparse(u).path).name))) and m.group(2) == version)
    return kept or urls


def fetch(url: str, dest: Path, links: Sequence[Path] = ()) -> tuple[Path, str]:
    """The sdist's bytes into ``dest`` (nothing of it runs); an index's ``#sha256=`` fragment must match. A
    ``file:`` URL must lie in one of the ``--find-links`` directories (an index cannot point at a host file)."""
    parsed = urlparse(url)
    name = unquote(Path(parsed.path).name)
    if not _FILE.match(name):
        raise UsageError(f"env build (from source): {name!r} is not a source distribution's file name")
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / name
    if parsed.scheme == "file":
        src = Path(unquote(parsed.path))
        if not any(src.resolve().parent == d.resolve() for d in links):
            raise UsageError(f"env build (from source): {src} is in no --find-links directory; not fetched")
        if src.is_symlink() or not src.is_file() or src.stat().st_size > MAX_SDIST_BYTES:
            raise UsageError(f"env build (from source): {src} is not a regular file under {MAX_SDIST_BYTES} bytes")
        shutil.copyfile(src, out)
    elif parsed.scheme == "https":
        _download(url, name, out)
    else:
        raise UsageError(f"env build (from source): {url}: only file: and https: sources are fetched")
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    want = re.search(r"#sha256=([0-9a-f]{64})", url)
    if want and want.group(1) != digest:
        raise UsageError(f"env build (from source): {name} hashes to sha256:{digest}, the index says {want.group(1)}")
    out.chmod(0o644)
    return out, digest


def _download(url: str, name: str, out: Path) -> None:
    import requests

    try:
        with requests.get(without_fragment(url), stream=True, timeout=60) as res, out.open("wb") as fh:
            res.raise_for_status()
            size = 0
            for chunk in res.iter_content(1 << 20):
                size += len(chunk)
                if size > MAX_SDIST_BYTES:
                    raise UsageError(f"env build (from source): {name} is over {MAX_SDIST_BYTES} bytes")
                fh.write(chunk)
    except requests.RequestException as exc:
        raise MachineUnfit(f"env build (from source): fetching {name} failed ({shown(type(exc).__name__)}); the "
                           "index or the network") from None


def build_requires(sdist: Path) -> list[str]:
    """``[build-system] requires`` of the archive's top-level ``pyproject.toml`` (read as text), else setuptools;
    each through the one door: a URL, a path, an option or anything but a plain requirement refuses the build."""
    reqs = _declared(sdist)
    kept, dropped = sort_out(reqs)
    if dropped:
        raise UsageError(f"env build (from source): {sdist.name}'s build requirement {dropped[0]}; refused, nothing "
                         "of it fetched or built")
    return kept


def _declared(sdist: Path) -> list[str]:
    try:
        text = _pyproject_text(sdist)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, OSError, ValueError) as exc:
        raise UsageError(f"env build (from source): {sdist.name} is not a readable archive "
                         f"({shown(type(exc).__name__)}); refused") from None
    if text is None:
        return list(DEFAULT_BUILD_REQUIRES)
    doc = read_toml(text, f"{sdist.name}'s pyproject.toml")
    table = doc.get("build-system") if isinstance(doc, dict) else None
    reqs = table.get("requires") if isinstance(table, dict) else None
    if not isinstance(reqs, list):
        return list(DEFAULT_BUILD_REQUIRES)
    if not all(isinstance(r, str) for r in reqs):
        raise UsageError(f"env build (from source): {sdist.name}'s [build-system] requires holds a non-string")
    return list(reqs)


#: Archive members looked at for the top-level ``pyproject.toml`` (tarfile keeps each one it reads in memory),
#: and the bytes decompressed to reach it (a member's declared size is skipped by decompressing it all).
MAX_MEMBERS = 100_000
MAX_SCAN_BYTES = 2 * 1024 * 1024 * 1024


def _pyproject_text(sdist: Path) -> str | None:
    """The archive's top-level ``pyproject.toml`` as text, None when it has none (within the bounds)."""
    text = None
    if sdist.name.endswith(".zip"):
        with zipfile.ZipFile(sdist) as zf:
            names = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith("/pyproject.toml")]
            if names and zf.getinfo(names[0]).file_size <= MAX_PYPROJECT_BYTES:
                text = zf.read(names[0]).decode("utf-8", "replace")
    else:
        with tarfile.open(sdist) as tf:
            for n, m in enumerate(tf):
                if n >= MAX_MEMBERS or m.offset_data + m.size > MAX_SCAN_BYTES:
                    raise UsageError(f"env build (from source): {sdist.name} holds over {MAX_MEMBERS} members or "
                                     f"{MAX_SCAN_BYTES} bytes before its pyproject.toml; refused")
                if m.isreg() and m.name.count("/") == 1 and m.name.endswith("/pyproject.toml") \
                        and m.size <= MAX_PYPROJECT_BYTES:
                    fh = tf.extractfile(m)
                    text = fh.read().decode("utf-8", "replace") if fh else None
                    break
    return text


def build_wheel(root: Path, sdist: Path, build_dist: Path, build_lock: Path, tools: Path, pip_wheel: str,
                out: Path, dest: Path, *, epoch: int) -> Path:
    """Build ``sdist`` into a wheel in ``out`` inside the sandbox (the image's root as ``/``, no network);
    the wheel is then taken into ``dest`` (:func:`_take_wheel`).
    ``SOURCE_DATE_EPOCH`` is the image's: the wheel's archive times, so the image, come out the same each build."""
    spec = SandboxSpec(rootfs=root, ro_binds=((sdist.parent, "/tmp/acx-sdist"), (build_dist, "/tmp/acx-build"),
                                              (build_lock.parent, "/tmp/acx-lock"), (tools, "/tmp/acx-tools")),
                       rw_binds=((out, "/tmp/acx-out"),), time_seconds=BUILD_SECONDS, memory_mib=4096, pids=256,
                       disk_mib=1024, file_size_mib=1024, open_files=1024,
                       env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp", "PIP_CONFIG_FILE": "/dev/null",
                            "SOURCE_DATE_EPOCH": str(epoch), "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"})
    give_to_sandbox(out, spec)
    pip = f"/tmp/bv/bin/python /tmp/acx-tools/{pip_wheel}/pip"
    script = ("set -e; /usr/bin/python3 -m venv --without-pip /tmp/bv; "
              f"{pip} install --no-index --find-links /tmp/acx-build --require-hashes --only-binary :all: --no-deps "
              f"--no-compile --disable-pip-version-check -q -r /tmp/acx-lock/{build_lock.name}; "
              f"{pip} wheel --no-index --no-deps --no-build-isolation --disable-pip-version-check -q "
              f"-w /tmp/acx-out /tmp/acx-sdist/{sdist.name}")
    res = run(spec, ["/bin/sh", "-c", script])
    wheels = sorted(e.name for e in os.scandir(out) if e.name.endswith(".whl"))  # names only: nothing followed
    if res.returncode != 0 or res.timed_out or len(wheels) != 1:
        said = (res.stdout + b"\n" + res.stderr).decode("utf-8", "replace").splitlines()
        # pip closes with its own summary ("note: This is an issue with the package", "hint: See above"); the
        # cause is the build's last lines, which pip quotes between "[N lines of output]" and "[end of output]"
        ends = [n for n, ln in enumerate(said) if ln.strip() == "[end of output]"]
        tail = [ln.strip() for ln in (said[:ends[-1]] if ends else said)
                if ln.strip() and not ln.strip().startswith(("note:", "hint:"))][-3:]
        raise UsageError(f"env build (from source): building {sdist.name} inside the sandbox failed "
                         f"(exit {res.returncode}{', timed out' if res.timed_out else ''}): {shown(' | '.join(tail))}")
    return _take_wheel(out, wheels[0], sdist.name, dest)


def _take_wheel(out: Path, name: str, sdist_name: str, dest: Path) -> Path:
    """The wheel the sandbox left in ``out``, copied into ``dest`` (the host's own folder): opened without
    following a link, a regular file within :data:`MAX_WHEEL_BYTES`, named for the sdist's own project and
    version. The sandbox writes ``out``: a symlink there made the host chmod and hash any file it pointed at,
    and a wheel named for another project would have joined the resolution in its place."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename
    from packaging.version import InvalidVersion, Version

    m = _FILE.match(sdist_name)
    try:
        project, version, _, _ = parse_wheel_filename(name)
        same = m is not None and normalize(project) == normalize(m.group(1)) and version == Version(m.group(2))
    except (InvalidWheelFilename, InvalidVersion):
        same = False
    if not same:
        raise UsageError(f"env build (from source): building {sdist_name} made {shown(name)}, a wheel of another "
                         "project or version; refused")
    try:
        fd = os.open(out / name, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        raise UsageError(f"env build (from source): building {sdist_name} left {shown(name)}, not a regular "
                         "file; refused") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise UsageError(f"env build (from source): building {sdist_name} left {shown(name)}, not a regular "
                             "file; refused")
        dest.mkdir(mode=0o755, parents=True, exist_ok=True)
        wheel, copied = dest / name, 0
        with wheel.open("xb") as to:
            while chunk := fh.read(1024 * 1024):
                copied += len(chunk)
                if copied > MAX_WHEEL_BYTES:
                    break
                to.write(chunk)
    if copied > MAX_WHEEL_BYTES:
        wheel.unlink()
        raise UsageError(f"env build (from source): the wheel built from {sdist_name} is over {MAX_WHEEL_BYTES} "
                         "bytes; refused")
    wheel.chmod(0o644)
    return wheel


def sdist_note(sdist: Path, digest: str, wheel: Path) -> dict[str, Any]:
    """What ``acx-env.json`` says of a package built from source: the sdist, its digest, the wheel made."""
    return {"sdist": sdist.name, "sdistSha256": digest, "wheel": wheel.name,
            "wheelSha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}


__all__ = ["build_requires", "build_wheel", "fetch", "file_name", "of_version", "pick", "sdist_note", "sources"]
