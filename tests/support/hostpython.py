"""A small image root from the host's own Python and pytest: an environment image in seconds, not minutes.

``mmdebstrap`` makes a real Debian root (minutes, marked slow); tests that only need *an* image with a Python
and pytest in it (to see that each game runs in its own) take the host's ``/usr/bin/python3``, its standard
library, pytest and the shared libraries they load, as one uncompressed tar layer.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

SKIP_STDLIB = {"test", "config-3.11-x86_64-linux-gnu", "site-packages", "idlelib", "tkinter", "turtledemo",
               "lib2to3", "ensurepip", "pydoc_data", "__pycache__"}
DIST = ("_pytest", "pytest", "pluggy", "iniconfig", "packaging", "attr", "attrs", "py.py", "exceptiongroup", "tomli")


def _libs(paths: list[str]) -> set[str]:
    out: set[str] = set()
    for p in paths:
        res = subprocess.run(["ldd", p], capture_output=True, text=True, check=False, timeout=30)
        for line in res.stdout.splitlines():
            parts = line.split()
            cand = parts[2] if "=>" in parts and len(parts) > 2 else parts[0]
            if cand.startswith("/"):
                out.add(cand)
    return out


def _in_usr(path: str) -> str:
    """The name relative to ``/`` with ``/lib``, ``/lib64`` and ``/bin`` merged into ``/usr`` (they are links)."""
    rel = path.lstrip("/")
    for prefix, to in (("lib/", "usr/lib/"), ("lib64/", "usr/lib64/"), ("bin/", "usr/bin/")):
        if rel.startswith(prefix):
            return to + rel[len(prefix):]
    return rel


def _add(tf: tarfile.TarFile, path: str, seen: set[str]) -> None:
    """``path`` (absolute, on the host) at its real location, and the links leading there as links."""
    real = os.path.realpath(path)
    real_rel = _in_usr(real)
    for p in (real, path):
        rel = _in_usr(p)
        if rel in seen:
            continue
        parent = os.path.dirname(rel)
        while parent and parent not in seen:
            info = tarfile.TarInfo(parent)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tf.addfile(info)
            seen.add(parent)
            parent = os.path.dirname(parent)
        seen.add(rel)
        if rel == real_rel:
            tf.add(real, arcname=rel, recursive=False)
        else:
            info = tarfile.TarInfo(rel)
            info.type, info.linkname = tarfile.SYMTYPE, real
            tf.addfile(info)


def python_root_tar() -> bytes:
    """The layer: ``/usr/bin/python3`` and what it needs to run pytest, ``bin``/``lib``/``lib64`` linked to /usr."""
    ver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    exe = os.path.realpath("/usr/bin/python3")
    stdlib = Path(f"/usr/lib/{ver}")
    files = [str(p) for p in sorted(stdlib.rglob("*"))
             if p.is_file() and not any(part in SKIP_STDLIB for part in p.relative_to(stdlib).parts)
             and not str(p.relative_to(stdlib)).startswith(("unittest/test", "distutils/tests"))]
    dist = Path("/usr/lib/python3/dist-packages")
    for entry in sorted(dist.iterdir()):
        if entry.name.split("-")[0] in DIST or entry.name in DIST:
            files += [str(p) for p in ([entry] if entry.is_file() else sorted(entry.rglob("*")))
                      if p.is_file() and "__pycache__" not in p.parts]
    dynload = [f for f in files if f.endswith(".so")]
    buf = io.BytesIO()
    seen: set[str] = set()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, target in (("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tf.addfile(info)
        for f in [exe, "/usr/bin/python3", *sorted(_libs([exe, *dynload])), *files]:
            _add(tf, f, seen)
    return buf.getvalue()
