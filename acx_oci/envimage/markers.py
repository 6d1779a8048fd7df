"""Dependencies that ``pip download --python-version`` leaves out for an image whose Python is not the host's.

pip picks wheels for the target Python, but it evaluates environment markers against the Python it runs on:
resolving for Debian bullseye's 3.9 on a 3.11 host, pytest's ``exceptiongroup; python_version < "3.11"`` and
``tomli; python_version < "3.11"`` were never downloaded, and pytest could not even start in the image. So
the resolution is closed here: every downloaded wheel's ``Requires-Dist`` (read from its ``METADATA`` as text,
nothing run) is evaluated for the target Python and platform, and what is required there and absent is named
for another download.
"""

from __future__ import annotations

import re
import zipfile
from email.parser import HeaderParser
from pathlib import Path

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement

#: The exact Python of each Debian suite's python3 (``python_full_version`` markers compare it).
FULL_VERSION = {"3.9": "3.9.2", "3.11": "3.11.2", "3.13": "3.13.5"}
MAX_METADATA = 4 * 1024 * 1024


def target_environment(python: str, machine: str) -> dict[str, str]:
    """PEP 508's marker variables for CPython ``python`` on Linux ``machine`` (the image, not the host)."""
    full = FULL_VERSION.get(python, f"{python}.0")
    return {"python_version": python, "python_full_version": full, "implementation_name": "cpython",
            "implementation_version": full, "platform_python_implementation": "CPython", "sys_platform": "linux",
            "os_name": "posix", "platform_system": "Linux", "platform_machine": machine, "platform_release": "",
            "platform_version": "", "extra": ""}


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _requires(wheel: Path) -> tuple[str, list[Requirement]]:
    """(distribution name, its ``Requires-Dist``) from the wheel's ``*.dist-info/METADATA``."""
    with zipfile.ZipFile(wheel) as zf:
        meta = next((n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")), None)
        if meta is None:
            return _name(wheel.name.split("-", 1)[0]), []
        with zf.open(meta) as fh:
            text = fh.read(MAX_METADATA).decode("utf-8", "replace")
    headers = HeaderParser().parsestr(text)
    reqs = []
    for line in headers.get_all("Requires-Dist") or ():
        try:
            reqs.append(Requirement(str(line)))
        except InvalidRequirement:
            continue
    return _name(str(headers.get("Name") or wheel.name.split("-", 1)[0])), reqs


def _applies(req: Requirement, env: dict[str, str], extras: frozenset[str]) -> bool:
    if req.marker is None:
        return True
    try:
        return any(req.marker.evaluate({**env, "extra": e}) for e in ("", *sorted(extras)))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return False


def missing(dist: Path, roots: list[str], env: dict[str, str], skip: set[str]) -> list[str]:
    """Requirements (``name`` and specifier, no marker) that the target needs and ``dist`` has no wheel for:
    from ``roots`` (the spec's lines) down every downloaded wheel's dependencies, with the extras asked for."""
    metas = dict(_requires(w) for w in sorted(dist.glob("*.whl")))
    todo: list[Requirement] = []
    for line in roots:
        try:
            todo.append(Requirement(line))
        except InvalidRequirement:
            continue
    seen: set[tuple[str, frozenset[str]]] = set()
    out: dict[str, str] = {}
    while todo:
        req = todo.pop()
        name, extras = _name(req.name), frozenset(req.extras)
        if (name, extras) in seen or name in skip or not _applies(req, env, frozenset()):
            continue
        seen.add((name, extras))
        if name not in metas:
            out.setdefault(name, f"{name}{req.specifier}")
            continue
        for dep in metas[name]:
            if _applies(dep, env, extras):
                todo.append(Requirement(f"{dep.name}{'[' + ','.join(sorted(dep.extras)) + ']' if dep.extras else ''}"
                                        f"{dep.specifier}"))
    return sorted(out.values())
